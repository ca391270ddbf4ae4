package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"gpu-topology-extender/tests/e2e/internal/cluster"
)

// kubectlPlugin: `kubectl gpu-topology` (tools/kubectl-gpu_topology, which kubectl finds on PATH
// by its name) reaches an extender through the real kube-apiserver's service proxy
// (--via proxy) and prints its nodes, explain and what-if tables; a refusal comes back as the
// plugin's exit status 1.
//
// What is and is not covered. The API server proxies a Service only to an EndpointSlice endpoint
// that is a Pod's IP, and never to a loopback address. There is no kubelet here, so the scenario
// starts one more extender (with --kubeconfig, like the mode's) on a non-loopback address of this
// host, and stands a Pod object (status.podIPs set by hand) with a selector-less Service and an
// EndpointSlice in front of it: the request really goes kubectl -> kube-apiserver -> extender,
// through the proxy's authorization and URL handling. Not covered: `--via port-forward` (the
// default), which needs a kubelet to open the tunnel; the plugin's port-forward path, its flags
// and bodies are checked against a stand-in kubectl by tests/ops/check-kubectl-plugin.sh. The
// scenario runs once, in cache mode, and is skipped when no kubectl (hack/build-kubectl.sh) or no
// non-loopback IPv4 address is at hand.
func kubectlPlugin(s *scenarioEnv) {
	if s.mode.mode.name != "cache" {
		s.t.Skip("runs once, in cache mode")
	}
	kubectl := findKubectl()
	if kubectl == "" {
		s.t.Skip("no kubectl: build it with tests/e2e/hack/build-kubectl.sh (run.sh does) or set E2E_KUBECTL")
	}
	ip := routableIPv4()
	if ip == "" {
		s.t.Skip("no non-loopback IPv4 address on this host: the API server proxies to none other")
	}
	s.createNodes(nodeSpec{name: "mesh", capture: dgx1V}, nodeSpec{name: "nvsw", capture: hgxA100})
	mesh, nvsw := s.name+"-mesh", s.name+"-nvsw"
	// A pod to explain, left pending: no scheduler serves its schedulerName.
	probe := s.newPod("probe", "nvidia.com/gpu", 2)
	probe.Spec.SchedulerName = "no-such-scheduler"
	s.createPod(probe)

	addr := startRoutableExtender(s, ip)
	service := exposeThroughService(s, ip, addr)

	run := func(wantStatus int, args ...string) string {
		s.t.Helper()
		full := append([]string{"gpu-topology", "--via", "proxy", "-n", namespace, "--service", service,
			"--port", "8888"}, args...)
		cmd := exec.Command(kubectl, full...)
		cmd.Env = append(os.Environ(),
			"PATH="+filepath.Join(cfg.repoRoot, "tools")+":"+filepath.Dir(kubectl)+":"+os.Getenv("PATH"),
			"KUBECONFIG="+cp.Kubeconfig)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		status := 0
		if exitErr, ok := err.(*exec.ExitError); ok {
			status = exitErr.ExitCode()
		} else if err != nil {
			s.t.Fatalf("kubectl %s: %v", strings.Join(full, " "), err)
		}
		if status != wantStatus {
			s.t.Fatalf("kubectl %s: exit status %d, want %d\nstdout:\n%s\nstderr:\n%s",
				strings.Join(full, " "), status, wantStatus, stdout.String(), stderr.String())
		}
		s.t.Logf("kubectl %s:\n%s%s", strings.Join(full, " "), stdout.String(), stderr.String())
		return stdout.String() + stderr.String()
	}

	// nodes: the two nodes as the extender reads their labels. The DGX-1V's cube mesh holds two
	// all-NVLink quads and no 8-set; the HGX A100's NVSwitch one 8-set.
	rows := map[string][]string{}
	for _, line := range strings.Split(run(0, "nodes"), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]] = f
		}
	}
	for name, sets := range map[string]string{mesh: "8/4/2/0", nvsw: "8/4/2/1"} {
		f := rows[name]
		if len(f) < 7 || f[1] != "known" || f[4] != "8" || f[6] != sets {
			s.t.Errorf("nodes: row of %s = %q, want topology known, 8 free, sets %s", name, f, sets)
		}
	}

	// explain: the pending pod, judged on both nodes.
	explained := run(0, "explain", namespace+"/"+probe.Name)
	if !strings.HasPrefix(explained, "pod "+namespace+"/"+probe.Name+": 2 GPUs") {
		s.t.Errorf("explain: unexpected header:\n%s", explained)
	}
	for _, name := range []string{mesh, nvsw} {
		if !strings.Contains(explained, name+" ") {
			s.t.Errorf("explain: no row for %s:\n%s", name, explained)
		}
	}

	// whatif: an 8-GPU pod goes to the all-NVLink node and takes its whole 8-set; a second finds
	// only the mesh, a third nothing.
	lines := strings.Split(run(0, "whatif", "--gpus", "8", "--count", "3"), "\n")
	want := [][]string{
		{"whatif-1", nvsw, "0,1,2,3,4,5,6,7", "nvlink"},
		{"whatif-2", mesh, "0,1,2,3,4,5,6,7"},
		{"whatif-3", "-", "-", "-"},
	}
	for i, w := range want {
		var got []string
		for _, line := range lines {
			if f := strings.Fields(line); len(f) > 0 && f[0] == w[0] {
				got = f
			}
		}
		if len(got) < len(w) || strings.Join(got[:len(w)], " ") != strings.Join(w, " ") {
			s.t.Errorf("whatif pod %d: row %q, want it to start %q", i+1, got, w)
		}
	}
	if !strings.Contains(strings.Join(lines, "\n"), "8/4/2/1 -> 0/0/0/0") {
		s.t.Errorf("whatif: the first pod does not strand the A100's 8-set:\n%s", strings.Join(lines, "\n"))
	}

	// A proposed policy, side by side, as JSON through create --raw.
	dir := s.t.TempDir()
	spread := filepath.Join(dir, "spread.yaml")
	broken := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(spread, []byte("strategy: spread\n"), 0o644); err != nil {
		s.t.Fatal(err)
	}
	if err := os.WriteFile(broken, []byte("weights:\n  linkQuality: -1\n"), 0o644); err != nil {
		s.t.Fatal(err)
	}
	var doc struct {
		Policies []struct {
			Name   string `json:"name"`
			Placed int    `json:"placed"`
		} `json:"policies"`
	}
	out := run(0, "whatif", "--gpus", "1", "--count", "2", "--policy", spread, "-o", "json")
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		s.t.Fatalf("whatif -o json: %v\n%s", err, out)
	}
	if len(doc.Policies) != 2 || doc.Policies[1].Name != "proposed" || doc.Policies[1].Placed != 2 {
		s.t.Errorf("whatif --policy: %+v, want running and proposed, both placing 2", doc.Policies)
	}

	// A broken policy file: the extender refuses it (400) and the plugin fails with status 1. Through
	// the proxy kubectl reports the status class only (it shows no body of a proxied error); the
	// plugin says where the message is.
	refused := run(1, "whatif", "--gpus", "1", "--policy", broken)
	if !strings.Contains(refused, "BadRequest") || !strings.Contains(refused, "--via port-forward") {
		s.t.Errorf("whatif with a broken policy: want kubectl's BadRequest and the plugin's hint:\n%s", refused)
	}
}

// findKubectl returns E2E_KUBECTL, else the kubectl hack/build-kubectl.sh built next to the
// control plane, else one on PATH; "" when there is none.
func findKubectl() string {
	if k := os.Getenv("E2E_KUBECTL"); k != "" {
		return k
	}
	if k := filepath.Join(cfg.binDir, "kubectl"); fileExists(k) {
		return k
	}
	if k, err := exec.LookPath("kubectl"); err == nil {
		return k
	}
	return ""
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// routableIPv4 returns an IPv4 address of this host that is neither loopback nor link-local.
func routableIPv4() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.To4() == nil || n.IP.IsLoopback() || n.IP.IsLinkLocalUnicast() {
			continue
		}
		return n.IP.String()
	}
	return ""
}

// startRoutableExtender starts an extender watching the cluster on ip and waits until its cache
// holds the scenario's nodes; it returns HOST:PORT.
func startRoutableExtender(s *scenarioEnv, ip string) string {
	s.t.Helper()
	port, err := cluster.FreePort()
	if err != nil {
		s.t.Fatal(err)
	}
	addr := net.JoinHostPort(ip, fmt.Sprint(port))
	dir := filepath.Join(logDir, s.mode.mode.name)
	ext, err := cluster.StartProcess("extender-plugin", dir, cfg.extender, "serve", "--listen", addr,
		"--policy", cfg.policy, "--kubeconfig", cp.Kubeconfig)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { ext.Stop(10 * time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	httpClient := &http.Client{Timeout: 5 * time.Second}
	if err := cluster.WaitHTTP(ctx, httpClient, "http://"+addr+"/readyz", "", ext); err != nil {
		s.t.Fatalf("the extender on %s: %v (see %s)", addr, err, ext.LogPath)
	}
	err = s.poll(seenTimeout, func(ctx context.Context) (bool, error) {
		for _, node := range s.nodes {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/nodes?node="+node, nil)
			if err != nil {
				return false, err
			}
			resp, err := httpClient.Do(req)
			if err != nil {
				return false, nil
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		s.t.Fatalf("the extender on %s never listed the scenario's nodes: %v", addr, err)
	}
	return addr
}

// exposeThroughService stands a Pod with podIPs [ip], a selector-less Service (port 8888, named
// http) and an EndpointSlice pointing that port at addr, so the API server's service proxy
// reaches the extender on addr. It returns the Service's name; the objects go with the scenario.
func exposeThroughService(s *scenarioEnv, ip, addr string) string {
	s.t.Helper()
	_, portText, _ := net.SplitHostPort(addr)
	var port int32
	fmt.Sscan(portText, &port)
	name := s.name + "-gte"
	ctx, cancel := apiContext()
	defer cancel()

	zero := int64(0)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.name + "-extender", Namespace: namespace,
			Labels: map[string]string{scenarioLabel: s.name}},
		Spec: corev1.PodSpec{
			NodeName:                      s.name + "-outside",
			TerminationGracePeriodSeconds: &zero,
			Containers:                    []corev1.Container{{Name: "extender", Image: gpuImage}},
		},
	}
	s.createPod(pod)
	created, err := client.CoreV1().Pods(namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	created.Status.Phase = corev1.PodRunning
	created.Status.PodIP = ip
	created.Status.PodIPs = []corev1.PodIP{{IP: ip}}
	if _, err := client.CoreV1().Pods(namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		s.t.Fatalf("pod %s status: %v", pod.Name, err)
	}

	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
			Labels: map[string]string{scenarioLabel: s.name}},
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Ports: []corev1.ServicePort{{Name: "http", Port: 8888, TargetPort: intstr.FromInt32(port),
				Protocol: corev1.ProtocolTCP}},
		},
	}
	if _, err := client.CoreV1().Services(namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("service %s: %v", name, err)
	}
	portName, protocol := "http", corev1.ProtocolTCP
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
			Labels: map[string]string{discoveryv1.LabelServiceName: name, scenarioLabel: s.name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{
			Addresses: []string{ip},
			TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: namespace, Name: pod.Name},
		}},
		Ports: []discoveryv1.EndpointPort{{Name: &portName, Port: &port, Protocol: &protocol}},
	}
	if _, err := client.DiscoveryV1().EndpointSlices(namespace).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("endpointslice %s: %v", name, err)
	}
	// The API server's service proxy of v1.34 resolves the Service through its v1 Endpoints (v1.37
	// through its EndpointSlices), which nothing mirrors here (no controller-manager): older
	// releases get the Endpoints object too, as an admin's selector-less Service would have.
	if !cp.Release.AtLeast(37) {
		eps := &corev1.Endpoints{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
				Labels: map[string]string{scenarioLabel: s.name}},
			Subsets: []corev1.EndpointSubset{{
				Addresses: []corev1.EndpointAddress{{IP: ip,
					TargetRef: &corev1.ObjectReference{Kind: "Pod", Namespace: namespace, Name: pod.Name}}},
				Ports: []corev1.EndpointPort{{Name: portName, Port: port, Protocol: protocol}},
			}},
		}
		if _, err := client.CoreV1().Endpoints(namespace).Create(ctx, eps, metav1.CreateOptions{}); err != nil {
			s.t.Fatalf("endpoints %s: %v", name, err)
		}
	}
	s.t.Cleanup(func() {
		ctx, cancel := apiContext()
		defer cancel()
		_ = client.CoreV1().Endpoints(namespace).Delete(ctx, name, metav1.DeleteOptions{})
		_ = client.DiscoveryV1().EndpointSlices(namespace).Delete(ctx, name, metav1.DeleteOptions{})
		_ = client.CoreV1().Services(namespace).Delete(ctx, name, metav1.DeleteOptions{})
	})
	return name
}
