package e2e

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	podresources "k8s.io/kubelet/pkg/apis/podresources/v1"

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

// startFakeKubelet serves fakeKubelet on a unix socket until the scenario ends.
func startFakeKubelet(s *scenarioEnv) string {
	socket := filepath.Join(logDir, s.name+"-kubelet.sock")
	lis, err := net.Listen("unix", socket)
	if err != nil {
		s.t.Fatalf("fake kubelet socket: %v", err)
	}
	server := grpc.NewServer()
	podresources.RegisterPodResourcesListerServer(server, fakeKubelet{})
	go server.Serve(lis)
	s.t.Cleanup(server.Stop)
	return socket
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
		nodeSpec{name: "agent", capture: dgx1V, mutate: withoutTopologyLabels},
	)
	node := s.name + "-agent"

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, agent, "run", "--node", node, "--kubeconfig", cp.Kubeconfig,
		"--once", "--listen", "", "--nvml-lib", fakeNVML, "--pod-resources-socket", startFakeKubelet(s))
	cmd.Env = append(os.Environ(), "GTE_FAKE_NVML_MACHINE=dgx1v")
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("gpu-topology-agent run --once: %v\n%s", err, out)
	}

	actx, acancel := apiContext()
	defer acancel()
	got, err := client.CoreV1().Nodes().Get(actx, node, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("node %s: %v", node, err)
	}
	want := map[string]string{
		key("v"): "1", key("n"): "8", key("fabric"): "mesh", key("nvl"): fakeDGX1VNVLinks,
		key("pci"): "PHHSSSSHHSSSSPSSSSSSSSPHHHHP", key("health"): fakeDGX1VHealth,
		key("used"): "00100000", key("model"): "Tesla-V100-SXM2-16GB",
	}
	for k, v := range want {
		if got.Labels[k] != v {
			s.t.Errorf("node %s label %s = %q, want %q", node, k, got.Labels[k], v)
		}
	}
	if s.mode.watchesCluster() {
		s.waitExtenderSeesGenLabels()
	}

	pod := s.newPod("gpu2", "nvidia.com/gpu", 2)
	s.createPod(pod)
	s.expectBoundTo(pod.Name, node)
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

// withoutTopologyLabels removes what the harness would publish, leaving the node as a fresh GPU
// node before any agent ran.
func withoutTopologyLabels(labels map[string]string) {
	for k := range labels {
		if strings.HasPrefix(k, topo.DefaultPrefix) {
			delete(labels, k)
		}
	}
}
