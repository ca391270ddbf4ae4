package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"gpu-topology-extender/tests/e2e/internal/chartrun"
	"gpu-topology-extender/tests/e2e/internal/cluster"
)

// startChartIdentity applies the chart's identities and runs the extender and kube-scheduler
// containers the chart renders as processes, each as its pod's ServiceAccount; both are stopped
// when t ends. In the chart's default (sidecar) layout both are containers of the kube-scheduler
// Deployment's pod, which the harness runs once; in the standalone layout the extender has its own
// Deployment. The agent DaemonSet's pod runs per scenario, on the scenario's node (agent_test.go).
func startChartIdentity(ctx context.Context, t *testing.T, env *modeEnv, dir string) error {
	run, err := applyChartRelease(ctx, dir, env.mode.chartSet)
	if err != nil {
		return err
	}
	env.chart = run

	extW, err := run.manifests.WorkloadRunning("extender")
	if err != nil {
		return err
	}
	ext, err := run.prepare(extW, "extender", "", "")
	if err != nil {
		return err
	}
	extProc, err := cluster.StartProcessEnv("extender", dir, ext.Binary, ext.Env, ext.Args...)
	if err != nil {
		return err
	}
	t.Cleanup(func() { extProc.Stop(10 * time.Second) })
	if err := waitProbe(ctx, ext, extProc); err != nil {
		return fmt.Errorf("the chart's extender never became ready: %w%s", err, forbiddenSummary())
	}
	env.extender = extProc
	// /metrics is served where the probes go: the metrics port, or the main port without one.
	metrics, err := ext.Port(intstr.FromString("metrics"))
	if err != nil {
		if metrics, err = ext.Port(intstr.FromString("http")); err != nil {
			return err
		}
	}
	env.metricsURL = fmt.Sprintf("http://127.0.0.1:%d/metrics", metrics)

	schedW, err := run.manifests.Workload("scheduler")
	if err != nil {
		return err
	}
	sched, err := run.prepare(schedW, "kube-scheduler", "", "")
	if err != nil {
		return err
	}
	identity, err := run.identity(schedW.Template.Spec)
	if err != nil {
		return err
	}
	s, err := run.configureScheduler(sched, ext, identity)
	if err != nil {
		return err
	}
	if s.leaseNamespace != "" {
		if err := ensureNamespace(ctx, s.leaseNamespace); err != nil {
			return err
		}
	}
	env.verbsURL = s.urlPrefix
	schedProc, err := cluster.RunScheduler(ctx, sched.Binary, dir, sched.Env, s.securePort,
		append(s.args,
			// In a pod, kube-scheduler's delegated authentication and authorization (its secure
			// port) use the in-cluster identity too.
			"--authentication-kubeconfig="+identity, "--authorization-kubeconfig="+identity)...)
	if err != nil {
		return fmt.Errorf("%w%s", err, forbiddenSummary())
	}
	t.Cleanup(func() { schedProc.Stop(10 * time.Second) })
	env.scheduler, env.schedulerName = schedProc, s.schedulerName
	return nil
}

// kubeSchedulerSecurePort is kube-scheduler's default --secure-port, which the chart's container
// declares and leaves to the default.
const kubeSchedulerSecurePort = 10259

// chartScheduler is the chart's kube-scheduler made runnable here.
type chartScheduler struct {
	args           []string // the container's arguments, --secure-port taken out
	securePort     int      // the loopback port for its secure port
	urlPrefix      string   // the extender's urlPrefix, translated
	schedulerName  string   // the profile's schedulerName; pods opt in with it
	leaseNamespace string   // leader election's namespace ("" when leader election is off)
}

// configureScheduler edits the materialised KubeSchedulerConfiguration where a pod and a process
// here differ: the extender's urlPrefix names the in-cluster Service, which becomes the loopback
// port the extender's container port got (after checking the Service leads to that port), and
// clientConnection.kubeconfig, which in a pod is empty (in-cluster identity), becomes the
// ServiceAccount's kubeconfig.
func (r *chartRun) configureScheduler(sched, ext *chartrun.Process, identity string) (chartScheduler, error) {
	s := chartScheduler{}
	declared := kubeSchedulerSecurePort
	var config string
	for _, a := range sched.Args {
		switch {
		case strings.HasPrefix(a, "--secure-port="):
			p, err := strconv.Atoi(strings.TrimPrefix(a, "--secure-port="))
			if err != nil {
				return s, fmt.Errorf("kube-scheduler %s: %w", a, err)
			}
			declared = p
			continue
		case strings.HasPrefix(a, "--config="):
			config = strings.TrimPrefix(a, "--config=")
		}
		s.args = append(s.args, a)
	}
	var err error
	if s.securePort, err = sched.Port(intstr.FromInt32(int32(declared))); err != nil {
		return s, fmt.Errorf("kube-scheduler serves on %d: %w", declared, err)
	}
	if probe, err := sched.ProbeURL(); err != nil || probe != fmt.Sprintf("https://127.0.0.1:%d/readyz", s.securePort) {
		return s, fmt.Errorf("kube-scheduler's probe %q (%v) is not /readyz over HTTPS on its secure port %d", probe, err, declared)
	}
	if config == "" {
		return s, fmt.Errorf("kube-scheduler has no --config=FILE argument")
	}
	raw, err := os.ReadFile(config)
	if err != nil {
		return s, fmt.Errorf("kube-scheduler --config: %w", err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return s, fmt.Errorf("rendered config.yaml: %w", err)
	}
	extenders, _ := doc["extenders"].([]any)
	if len(extenders) != 1 {
		return s, fmt.Errorf("rendered config.yaml has %d extenders, want 1", len(extenders))
	}
	extender, _ := extenders[0].(map[string]any)
	if missing := unmanagedFixtureResources(extender); len(missing) > 0 {
		return s, fmt.Errorf("the chart's default managedResources lack %v, which the fixtures' nodes advertise: "+
			"kube-scheduler would place those pods without the extender", missing)
	}
	rendered, _ := extender["urlPrefix"].(string)
	if s.urlPrefix, err = r.extenderURL(rendered, ext); err != nil {
		return s, err
	}
	extender["urlPrefix"] = s.urlPrefix

	conn, _ := doc["clientConnection"].(map[string]any)
	if conn == nil {
		conn = map[string]any{}
	}
	if path, _ := conn["kubeconfig"].(string); path != "" {
		if conn["kubeconfig"], err = sched.LocalPath(path); err != nil {
			return s, fmt.Errorf("clientConnection.kubeconfig: %w", err)
		}
	} else {
		conn["kubeconfig"] = identity
	}
	doc["clientConnection"] = conn

	if profiles, _ := doc["profiles"].([]any); len(profiles) == 1 {
		p, _ := profiles[0].(map[string]any)
		s.schedulerName, _ = p["schedulerName"].(string)
	}
	if s.schedulerName == "" {
		return s, fmt.Errorf("rendered config.yaml has no single profile with a schedulerName")
	}
	if le, _ := doc["leaderElection"].(map[string]any); le != nil && le["leaderElect"] == true {
		s.leaseNamespace, _ = le["resourceNamespace"].(string)
	}
	text, err := yaml.Marshal(doc)
	if err != nil {
		return s, err
	}
	return s, os.WriteFile(config, text, 0o600)
}

// extenderURL is where the rendered urlPrefix leads here: a loopback URL reaches a container of
// kube-scheduler's own pod (the sidecar layout), whose declared port becomes the loopback port it
// got; an in-cluster Service URL is followed through the Service (serviceToLoopback).
func (r *chartRun) extenderURL(rendered string, ext *chartrun.Process) (string, error) {
	u, err := url.Parse(rendered)
	if err != nil {
		return "", fmt.Errorf("urlPrefix %q: %w", rendered, err)
	}
	if u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" {
		return r.serviceToLoopback(rendered, ext)
	}
	extW, err := r.manifests.WorkloadRunning("extender")
	if err != nil {
		return "", err
	}
	schedW, err := r.manifests.WorkloadRunning("kube-scheduler")
	if err != nil {
		return "", err
	}
	if extW.Name != schedW.Name {
		return "", fmt.Errorf("urlPrefix %q is loopback, but the extender runs in %s %s, not in kube-scheduler's pod (%s %s)",
			rendered, extW.Kind, extW.Name, schedW.Kind, schedW.Name)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return "", fmt.Errorf("urlPrefix %q: port: %w", rendered, err)
	}
	local, err := ext.Port(intstr.FromInt32(int32(port)))
	if err != nil {
		return "", fmt.Errorf("urlPrefix %q: the extender container beside kube-scheduler: %w", rendered, err)
	}
	u.Host = fmt.Sprintf("127.0.0.1:%d", local)
	return u.String(), nil
}

// serviceToLoopback follows an in-cluster URL http(s)://SERVICE.NAMESPACE.svc:PORT/PATH through the
// rendered Service to the extender container's port, and returns the URL of that port here. A
// Service with a selector must select the extender's pods, and its targetPort be the extender's; a
// Service without one (the standalone layout) leads where its EndpointSlice points, which the
// leading extender writes itself (serviceEndpoint).
func (r *chartRun) serviceToLoopback(rendered string, ext *chartrun.Process) (string, error) {
	u, err := url.Parse(rendered)
	if err != nil {
		return "", fmt.Errorf("urlPrefix %q: %w", rendered, err)
	}
	parts := strings.Split(u.Hostname(), ".")
	if len(parts) < 3 || parts[2] != "svc" {
		return "", fmt.Errorf("urlPrefix %q does not name an in-cluster Service (SERVICE.NAMESPACE.svc)", rendered)
	}
	svc, err := r.manifests.Service(parts[0], parts[1])
	if err != nil {
		return "", fmt.Errorf("urlPrefix %q: %w", rendered, err)
	}
	extW, err := r.manifests.WorkloadRunning("extender")
	if err != nil {
		return "", err
	}
	port := u.Port()
	i := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return strconv.Itoa(int(p.Port)) == port })
	if i < 0 {
		return "", fmt.Errorf("urlPrefix %q: Service %s has no port %s", rendered, svc.Name, port)
	}
	target := svc.Spec.Ports[i].TargetPort
	if target.Type == intstr.Int && target.IntVal == 0 {
		target = intstr.FromInt32(svc.Spec.Ports[i].Port)
	}
	local, err := ext.Port(target)
	if err != nil {
		return "", fmt.Errorf("Service %s port %s targets %s: %w", svc.Name, port, target.String(), err)
	}
	if len(svc.Spec.Selector) == 0 {
		if err := serviceEndpoint(svc, svc.Spec.Ports[i].Name, local); err != nil {
			return "", fmt.Errorf("urlPrefix %q: %w", rendered, err)
		}
	} else if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(extW.Template.Labels)) {
		return "", fmt.Errorf("Service %s selects %v, not the extender's pods (%v)", svc.Name, svc.Spec.Selector, extW.Template.Labels)
	}
	u.Host = fmt.Sprintf("127.0.0.1:%d", local)
	return u.String(), nil
}

// serviceEndpoint waits until an EndpointSlice of the selector-less Service (label
// kubernetes.io/service-name) names the pod IP the harness gives (chartPodIP) and, for the Service
// port portName, the extender's port: the leader has published itself as the Service's endpoint,
// where kube-proxy would route. (The process listens on loopback; the harness then calls it there.)
func serviceEndpoint(svc *corev1.Service, portName string, want int) error {
	sel := metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc.Name}
	var last string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := apiContext()
		list, err := client.DiscoveryV1().EndpointSlices(svc.Namespace).List(ctx, sel)
		cancel()
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("%d slices", len(list.Items))
			for _, s := range list.Items {
				last = fmt.Sprintf("slice %s at %s", s.Name, sliceBackend(&s))
				if sliceBackendNamed(&s, portName) == net.JoinHostPort(chartPodIP(), strconv.Itoa(want)) {
					return nil
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("Service %s has no selector and no EndpointSlice leads to the extender's port %d within 30 s (last: %s)",
		svc.Name, want, last)
}

// unmanagedFixtureResources lists the GPU and MIG resources the fixtures advertise that the rendered
// extender does not manage. An extender without managedResources (extender.dra) is sent every pod.
func unmanagedFixtureResources(ext map[string]any) []string {
	managed := map[string]bool{}
	list, _ := ext["managedResources"].([]any)
	if _, listed := ext["managedResources"]; !listed {
		return nil
	}
	for _, item := range list {
		if r, _ := item.(map[string]any); r != nil {
			if name, _ := r["name"].(string); name != "" {
				managed[name] = true
			}
		}
	}
	var missing []string
	for _, r := range managedResources {
		if !managed[r] {
			missing = append(missing, r)
		}
	}
	return missing
}

// insecureLoopbackClient probes processes this harness started on loopback ports it chose;
// kube-scheduler serves a self-signed certificate.
func insecureLoopbackClient() *http.Client {
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback readiness probe
	}}
}
