package e2e

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	podresources "k8s.io/kubelet/pkg/apis/podresources/v1"

	"gpu-topology-extender/tests/e2e/internal/chartrun"
	"gpu-topology-extender/tests/e2e/internal/cluster"
	"gpu-topology-extender/tests/e2e/internal/promtext"
	"gpu-topology-extender/tests/e2e/internal/topo"
)

// The node agent under test and the fake libnvidia-ml.so.1 the C++ test tree builds
// (tests/agent/fake_nvml); GTE_AGENT_BINARY and GTE_FAKE_NVML override them.
func agentPaths() (agent, fakeNVML string) {
	agent = envOr("GTE_AGENT_BINARY", filepath.Join(cfg.repoRoot, "build", "bin", "gpu-topology-agent"))
	fakeNVML = envOr("GTE_FAKE_NVML", filepath.Join(cfg.repoRoot, "build", "fake-nvml", "libnvidia-ml.so.1"))
	return agent, fakeNVML
}

// The DGX-1V the fake NVML serves: its NVLink pairs (hybrid cube-mesh) and health (GPU 5 has
// page retirement pending).
const (
	fakeDGX1VNVLinks = "1122000210200200100001112212"
	fakeDGX1VHealth  = "11111011"
)

// fakeKubelet answers the kubelet's PodResources List: one pod holding GPU 2 of the fake DGX-1V
// (by UUID, as the NVIDIA device plugin reports it) and one holding another vendor's device.
type fakeKubelet struct {
	podresources.UnimplementedPodResourcesListerServer
}

func (fakeKubelet) List(context.Context, *podresources.ListPodResourcesRequest) (*podresources.ListPodResourcesResponse, error) {
	pod := func(name, resource, id string) *podresources.PodResources {
		return &podresources.PodResources{Name: name, Namespace: "default",
			Containers: []*podresources.ContainerResources{{Name: "main",
				Devices: []*podresources.ContainerDevices{{ResourceName: resource, DeviceIds: []string{id}}}}}}
	}
	return &podresources.ListPodResourcesResponse{PodResources: []*podresources.PodResources{
		pod("trainer", "nvidia.com/gpu", "GPU-dgx1v-2"),
		pod("nic-user", "example.com/nic", "nic0"),
	}}, nil
}

// startFakeKubelet serves fakeKubelet on the unix socket path until the scenario ends.
func startFakeKubelet(s *scenarioEnv, socket string) {
	serveKubelet(s, socket, fakeKubelet{})
}

// serveKubelet serves a PodResources lister on the unix socket path until the scenario ends.
func serveKubelet(s *scenarioEnv, socket string, lister podresources.PodResourcesListerServer) {
	lis, err := net.Listen("unix", socket)
	if err != nil {
		s.t.Fatalf("fake kubelet socket: %v", err)
	}
	server := grpc.NewServer()
	podresources.RegisterPodResourcesListerServer(server, lister)
	go server.Serve(lis)
	s.t.Cleanup(server.Stop)
}

// scriptedKubelet answers List with the pods' devices the scenario sets: pod name to the device
// ids of nvidia.com/gpu its one container holds.
type scriptedKubelet struct {
	podresources.UnimplementedPodResourcesListerServer
	mu   sync.Mutex
	pods map[string][]string
}

func (k *scriptedKubelet) set(pods map[string][]string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.pods = pods
}

func (k *scriptedKubelet) List(context.Context, *podresources.ListPodResourcesRequest) (*podresources.ListPodResourcesResponse, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := &podresources.ListPodResourcesResponse{}
	for name, ids := range k.pods {
		out.PodResources = append(out.PodResources, &podresources.PodResources{Name: name, Namespace: namespace,
			Containers: []*podresources.ContainerResources{{Name: "main",
				Devices: []*podresources.ContainerDevices{{ResourceName: "nvidia.com/gpu", DeviceIds: ids}}}}})
	}
	return out, nil
}

// waitExtenderSeesGenLabels polls until the extender's cache holds as many nodes with a `gen` label
// as the API server (its label-age histogram counts one observation per such node), so the labels
// the agent just wrote are in the snapshot the next scheduling cycle reads.
func (s *scenarioEnv) waitExtenderSeesGenLabels() {
	err := s.poll(time.Minute, func(ctx context.Context) (bool, error) {
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		want := 0
		for _, n := range nodes.Items {
			if _, ok := n.Labels[key("gen")]; ok {
				want++
			}
		}
		samples, err := promtext.Scrape(ctx, s.mode.metricsURL)
		if err != nil {
			return false, nil
		}
		got := int(samples.Value("gpu_topology_extender_node_label_age_seconds_count", nil))
		return want > 0 && got == want, nil
	})
	if err != nil {
		s.t.Fatalf("the extender's cache never counted the agent's gen label: %v", err)
	}
}

// agentLabelsNode: gpu-topology-agent, discovering a DGX-1V through the fake NVML and its usage
// through a fake kubelet PodResources socket, publishes the labels of a node that has none, against
// the real kube-apiserver; a 2-GPU pod then lands on that node, on an NVLink pair, rather than on
// an RTX 4090 box (all pairs SYS). With two nodes a GPU-blind extender lands on the right node by
// chance half the time: this scenario is about the agent's labels reaching the scheduler, and the
// NVLink placement itself is proven with better odds by nvlink-beats-spread.
func agentLabelsNode(s *scenarioEnv) {
	agent, fakeNVML := agentPaths()
	for _, f := range []string{agent, fakeNVML} {
		if _, err := os.Stat(f); err != nil {
			s.t.Fatalf("%v (build the C++ tree first: cmake --build build)", err)
		}
	}
	s.createNodes(
		nodeSpec{name: "rtx", capture: rtx4090},
		nodeSpec{name: "agent", capture: dgx1V, mutate: asFreshGPUNode},
	)
	node := s.name + "-agent"
	var daemon *chartAgent
	if s.mode.chart != nil {
		daemon = s.runChartAgent(node, fakeNVML)
	} else {
		s.runAgentOnce(agent, fakeNVML, node)
	}
	s.expectLabels(node, daemon, map[string]string{
		key("v"): "1", key("n"): "8", key("fabric"): "mesh", key("nvl"): fakeDGX1VNVLinks,
		key("pci"): "PHHSSSSHHSSSSPSSSSSSSSPHHHHP", key("health"): fakeDGX1VHealth,
		key("used"): "00100000", key("model"): "Tesla-V100-SXM2-16GB",
	})
	if daemon != nil {
		// The kubelet would restart a pod whose liveness probe fails.
		if err := waitProbe(context.Background(), daemon.spec, daemon.proc); err != nil {
			s.t.Errorf("the agent's liveness probe after it published: %v", err)
		}
	}
	if s.mode.watchesCluster() {
		s.waitExtenderSeesGenLabels()
	}

	pod := s.newPod("gpu2", "nvidia.com/gpu", 2)
	s.createPod(pod)
	s.expectBoundTo(pod.Name, node)
	actx, acancel := apiContext()
	defer acancel()
	p, err := client.CoreV1().Pods(namespace).Get(actx, pod.Name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("pod %s: %v", pod.Name, err)
	}
	if v, ok := p.Annotations[key("gpus")]; ok {
		idx, err := gpuIndices(v)
		if err != nil || len(idx) != 2 {
			s.t.Fatalf("pod %s annotated %q: %v", pod.Name, v, err)
		}
		i, j := idx[0], idx[1]
		if i > j {
			i, j = j, i
		}
		k := i*(2*8-i-1)/2 + (j - i - 1)
		if fakeDGX1VNVLinks[k] == '0' {
			s.t.Errorf("pod %s got GPUs %d and %d, which share no NVLink", pod.Name, i, j)
		}
		s.t.Logf("pod %s got GPUs %d and %d of %s", pod.Name, i, j, node)
		for _, g := range idx {
			if g == 2 || g == 5 {
				s.t.Errorf("pod %s got GPU %d (2 is in use per the kubelet, 5 unhealthy)", pod.Name, g)
			}
		}
	}
}

// asFreshGPUNode removes what the harness would publish, leaving the node as a fresh GPU node
// before any agent ran, labelled as the NVIDIA GPU Operator labels GPU nodes (the chart's agent
// DaemonSet selects that label).
func asFreshGPUNode(labels map[string]string) {
	for k := range labels {
		if strings.HasPrefix(k, topo.DefaultPrefix) {
			delete(labels, k)
		}
	}
	labels["nvidia.com/gpu.present"] = "true"
}

// runAgentOnce runs one pass of the agent as the test's admin, with extra flags, against the fake
// kubelet.
func (s *scenarioEnv) runAgentOnce(agent, fakeNVML, node string, extra ...string) {
	socket := filepath.Join(logDir, s.name+"-kubelet.sock")
	startFakeKubelet(s, socket)
	s.runAgentPass(agent, fakeNVML, node, socket, extra...)
}

// runAgentPass runs one pass of the agent as the test's admin against the kubelet socket the
// scenario serves.
func (s *scenarioEnv) runAgentPass(agent, fakeNVML, node, socket string, extra ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	args := append([]string{"run", "--node", node, "--kubeconfig", cp.Kubeconfig,
		"--once", "--listen", "", "--nvml-lib", fakeNVML, "--pod-resources-socket", socket}, extra...)
	cmd := exec.CommandContext(ctx, agent, args...)
	cmd.Env = append(os.Environ(), "GTE_FAKE_NVML_MACHINE=dgx1v")
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("gpu-topology-agent run --once: %v\n%s", err, out)
	}
}

// runChartAgent runs the pod the chart's agent DaemonSet would start on node, as the agent's
// ServiceAccount, until the scenario ends: the node's filesystem (for the hostPath volume) is a
// temporary directory holding the fake kubelet's PodResources socket where the kubelet keeps it.
func (s *scenarioEnv) runChartAgent(node, fakeNVML string) *chartAgent {
	w, err := s.mode.chart.manifests.Workload("agent")
	if err != nil {
		s.t.Fatal(err)
	}
	spec := w.Template.Spec
	ctx, cancel := apiContext()
	defer cancel()
	n, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	if spec.Affinity != nil && spec.Affinity.NodeAffinity != nil {
		s.t.Fatalf("the agent DaemonSet has a node affinity; the harness places its pod by nodeSelector only")
	}
	if !labels.SelectorFromSet(spec.NodeSelector).Matches(labels.Set(n.Labels)) {
		s.t.Fatalf("the agent DaemonSet's nodeSelector %v does not select GPU node %s (labels %v)", spec.NodeSelector, node, n.Labels)
	}
	// Short: the socket's path must fit a unix socket address (108 bytes).
	nodeRoot, err := os.MkdirTemp("", "gte-node-")
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { os.RemoveAll(nodeRoot) })
	sockets := filepath.Join(nodeRoot, "var", "lib", "kubelet", "pod-resources")
	if err := os.MkdirAll(sockets, 0o755); err != nil {
		s.t.Fatal(err)
	}
	startFakeKubelet(s, filepath.Join(sockets, "kubelet.sock"))

	proc, err := s.mode.chart.prepare(w, "agent", node, nodeRoot)
	if err != nil {
		s.t.Fatal(err)
	}
	env := append(proc.Env, "GTE_FAKE_NVML_MACHINE=dgx1v")
	if spec.RuntimeClassName != nil && *spec.RuntimeClassName == "nvidia" {
		// The NVIDIA container runtime makes the driver's libnvidia-ml.so.1 visible in the
		// container; here that is the fake's.
		env = append(env, "LD_LIBRARY_PATH="+filepath.Dir(fakeNVML))
	}
	p, err := cluster.StartProcessEnv("agent", filepath.Join(logDir, s.mode.mode.name), proc.Binary, env, proc.Args...)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { p.Stop(10 * time.Second) })
	return &chartAgent{spec: proc, proc: p}
}

// chartAgent is the agent DaemonSet's pod running as a process.
type chartAgent struct {
	spec *chartrun.Process
	proc *cluster.Process
}

// expectLabels waits until node carries the labels (the agent's first pass), then asserts them.
func (s *scenarioEnv) expectLabels(node string, agent *chartAgent, want map[string]string) {
	s.t.Helper()
	var got map[string]string
	err := s.poll(seenTimeout, func(ctx context.Context) (bool, error) {
		n, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got = n.Labels
		for k, v := range want {
			if got[k] != v {
				return false, nil
			}
		}
		return true, nil
	})
	if err == nil {
		return
	}
	for k, v := range want {
		if got[k] != v {
			s.t.Errorf("node %s label %s = %q, want %q", node, k, got[k], v)
		}
	}
	if agent != nil {
		s.t.Logf("last lines of %s:\n%s%s", agent.proc.LogPath, agent.proc.Tail(20), forbiddenSummary())
	}
	s.t.FailNow()
}
