package cluster

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Extender is the extenders[] entry of the scheduler configuration.
type Extender struct {
	URLPrefix        string
	NodeCacheCapable bool
	Bind             bool // delegate binding; only meaningful when the extender has a cluster connection
	Preempt          bool // ask the extender about preemption candidates (preemptVerb)
	Weight           int
	ManagedResources []string // all with ignoredByScheduler: false, so NodeResourcesFit still counts them
	// HTTPTimeout is kube-scheduler's httpTimeout for every verb; 0 means 10 s, roomy enough for a
	// loaded CI machine. The benchmark uses the chart's 3 s to see what a user sees.
	HTTPTimeout time.Duration
}

// ClientRate is kube-scheduler's clientConnection qps and burst towards the API server; zero
// values leave kube-scheduler's defaults (qps 50, burst 100).
type ClientRate struct {
	QPS   int
	Burst int
}

// SchedulerConfig renders a kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration with one
// profile (default-scheduler) and one extender.
func SchedulerConfig(kubeconfig string, ext Extender) string {
	return SchedulerConfigWith(kubeconfig, ClientRate{}, &ext)
}

// Lease is where a leader-elected kube-scheduler keeps its lease, and its timings (zero: omitted,
// kube-scheduler's own defaults of 15 s, 10 s, 2 s).
type Lease struct {
	Namespace, Name                           string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// SchedulerConfigWith is SchedulerConfig with a client rate and an optional extender: nil renders
// kube-scheduler alone.
func SchedulerConfigWith(kubeconfig string, rate ClientRate, ext *Extender) string {
	return SchedulerConfigLeased(kubeconfig, rate, ext, nil)
}

// SchedulerConfigLeased is SchedulerConfigWith with leader election on lease (nil: off), with the
// lease's timings.
func SchedulerConfigLeased(kubeconfig string, rate ClientRate, ext *Extender, lease *Lease) string {
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %q
`, kubeconfig)
	if rate.QPS > 0 {
		fmt.Fprintf(&b, "  qps: %d\n", rate.QPS)
	}
	if rate.Burst > 0 {
		fmt.Fprintf(&b, "  burst: %d\n", rate.Burst)
	}
	if lease != nil {
		fmt.Fprintf(&b, "leaderElection:\n  leaderElect: true\n  resourceNamespace: %s\n  resourceName: %s\n",
			lease.Namespace, lease.Name)
		for _, t := range []struct {
			key string
			d   time.Duration
		}{{"leaseDuration", lease.LeaseDuration}, {"renewDeadline", lease.RenewDeadline}, {"retryPeriod", lease.RetryPeriod}} {
			if t.d > 0 {
				fmt.Fprintf(&b, "  %s: %s\n", t.key, t.d)
			}
		}
	} else {
		b.WriteString("leaderElection:\n  leaderElect: false\n")
	}
	b.WriteString(`# Let the extender see every feasible node instead of a sample.
percentageOfNodesToScore: 100
profiles:
- schedulerName: default-scheduler
`)
	if ext == nil {
		return b.String()
	}
	fmt.Fprintf(&b, `extenders:
- urlPrefix: %q
  filterVerb: filter
  prioritizeVerb: prioritize
`, ext.URLPrefix)
	if ext.Bind {
		b.WriteString("  bindVerb: bind\n")
	}
	if ext.Preempt {
		b.WriteString("  preemptVerb: preempt\n")
	}
	timeout := ext.HTTPTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	fmt.Fprintf(&b, "  weight: %d\n  nodeCacheCapable: %t\n  httpTimeout: %s\n",
		ext.Weight, ext.NodeCacheCapable, timeout)
	// None: kube-scheduler calls the extender for every pod (ResourceClaim pods request no
	// extended resource).
	if len(ext.ManagedResources) > 0 {
		b.WriteString("  managedResources:\n")
	}
	for _, r := range ext.ManagedResources {
		fmt.Fprintf(&b, "  - name: %s\n    ignoredByScheduler: false\n", r)
	}
	return b.String()
}

// StartScheduler writes config into dir and runs kube-scheduler with it until /readyz is 200.
func StartScheduler(ctx context.Context, binDir, dir, logDir, config string) (*Process, error) {
	cfgPath := filepath.Join(dir, "scheduler-config.yaml")
	if err := os.WriteFile(cfgPath, []byte(config), 0o600); err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	return RunScheduler(ctx, filepath.Join(binDir, "kube-scheduler"), logDir, nil, port,
		"--config="+cfgPath,
		"--v=3", // v=3 logs every scheduling attempt with the pod's name, which failure output greps
	)
}

// RunScheduler runs the kube-scheduler binary bin with env and args, serving on 127.0.0.1:port,
// until /readyz is 200.
func RunScheduler(ctx context.Context, bin, logDir string, env []string, port int, args ...string) (*Process, error) {
	p, err := StartProcessEnv("kube-scheduler", logDir, bin, env,
		append(args, "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port))...)
	if err != nil {
		return nil, err
	}
	// The scheduler serves a self-signed certificate it made itself; this probe only asks a
	// loopback port we chose whether it is up.
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback readiness probe
	}}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := WaitHTTP(ctx, client, fmt.Sprintf("https://127.0.0.1:%d/readyz", port), "", p); err != nil {
		p.Stop(5 * time.Second)
		return nil, err
	}
	return p, nil
}

// ExtenderOptions describe one start of the extender under test.
type ExtenderOptions struct {
	Binary     string
	Policy     string
	Kubeconfig string   // empty: no cluster connection, decide from the objects in each request
	Name       string   // the process's (and its log's) name; empty: extender
	Args       []string // appended to serve's arguments
	// DRA passes --dra (with Kubeconfig): the extender also watches ResourceSlices, DeviceClasses
	// and ResourceClaims.
	DRA bool
}

// StartExtender runs `<binary> serve --listen 127.0.0.1:<port> --policy <policy> [--kubeconfig f]`
// and waits until GET /readyz is 200. It returns the URL prefix for the scheduler configuration.
func StartExtender(ctx context.Context, logDir string, o ExtenderOptions) (*Process, string, error) {
	if _, err := os.Stat(o.Binary); err != nil {
		return nil, "", fmt.Errorf("extender binary: %w (build it first, or set GTE_BINARY)", err)
	}
	if _, err := os.Stat(o.Policy); err != nil {
		return nil, "", fmt.Errorf("extender policy: %w (set GTE_POLICY)", err)
	}
	port, err := FreePort()
	if err != nil {
		return nil, "", err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := []string{"serve", "--listen", addr, "--policy", o.Policy}
	if o.Kubeconfig != "" {
		args = append(args, "--kubeconfig", o.Kubeconfig)
	}
	if o.DRA {
		args = append(args, "--dra")
	}
	name := o.Name
	if name == "" {
		name = "extender"
	}
	p, err := StartProcess(name, logDir, o.Binary, append(args, o.Args...)...)
	if err != nil {
		return nil, "", err
	}
	// Teardown, not a rollout: SIGINT skips the drain period that SIGTERM starts (no client has
	// to move away), and older binaries treat it as SIGTERM.
	p.StopSignal = syscall.SIGINT
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	client := &http.Client{Timeout: 5 * time.Second}
	if err := WaitHTTP(ctx, client, "http://"+addr+"/readyz", "", p); err != nil {
		p.Stop(5 * time.Second)
		if o.Kubeconfig != "" {
			err = fmt.Errorf("extender started with --kubeconfig never became ready; does this build "+
				"support a cluster connection yet? %w", err)
		}
		return nil, "", err
	}
	return p, "http://" + addr + "/scheduler", nil
}
