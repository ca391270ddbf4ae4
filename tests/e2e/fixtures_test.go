package e2e

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"gpu-topology-extender/tests/e2e/internal/cluster"
	"gpu-topology-extender/tests/e2e/internal/topo"
)

// Captures in tests/data/topologies used by the scenarios, with the model label each machine
// type would carry.
const (
	dgx1V   = "dgx1-v100-cubemesh.topo" // 8x V100, hybrid cube-mesh NVLink
	hgxA100 = "hgx-a100-nvswitch.topo"  // 8x A100, NVSwitch
	hgxH100 = "hgx-h100-nvswitch.topo"  // 8x H100, NVSwitch
	rtx4090 = "rtx4090x8-all-sys.topo"  // 8x RTX 4090, no NVLink, all pairs across sockets
	pciePHB = "pcie8-pix-phb-sys.topo"  // 8 PCIe GPUs: PIX pairs, PHB quads, SYS halves
	pciePXB = "pcie8-pix-pxb-sys.topo"  // 8 PCIe GPUs: PIX pairs, PXB quads, SYS halves
)

var models = map[string]string{
	dgx1V:   "Tesla-V100-SXM2-16GB",
	hgxA100: "NVIDIA-A100-SXM4-80GB",
	hgxH100: "NVIDIA-H100-80GB-HBM3",
	rtx4090: "NVIDIA-GeForce-RTX-4090",
	pciePHB: "Tesla-T4",
	pciePXB: "Tesla-T4",
}

// nodeSpec describes one fake node: a real topology capture plus the agent-published state.
type nodeSpec struct {
	name    string // suffix; the node is named <scenario>-<name>
	capture string
	state   topo.State
	// gpus is the allocatable nvidia.com/gpu; 0 means the capture's GPU count.
	gpus int64
	// extra allocatable resources, e.g. MIG instances.
	extra map[string]int64
	// mutate edits the finished label set, to make malformed nodes.
	mutate func(labels map[string]string)
	// noDevicePlugin: no nvidia.com/gpu in capacity or allocatable (a node whose GPUs a DRA driver
	// publishes, dra_test.go).
	noDevicePlugin bool
}

// build returns the Node object, status included, for the scenario.
func (n nodeSpec) build(scenario string) (*corev1.Node, error) {
	m, err := topo.ParseFile(filepath.Join(cfg.topologies, n.capture))
	if err != nil {
		return nil, err
	}
	st := n.state
	if st.Model == "" {
		st.Model = models[n.capture]
	}
	labels, err := topo.Labels(m, st, topo.DefaultPrefix)
	if err != nil {
		return nil, err
	}
	if n.mutate != nil {
		n.mutate(labels)
	}
	name := scenario + "-" + n.name
	labels["kubernetes.io/hostname"] = name
	labels[scenarioLabel] = scenario

	gpus := n.gpus
	if gpus == 0 {
		gpus = int64(m.N)
	}
	node := cluster.FakeGPUNode(name, labels, gpus, n.extra)
	if n.noDevicePlugin {
		delete(node.Status.Capacity, "nvidia.com/gpu")
		delete(node.Status.Allocatable, "nvidia.com/gpu")
	}
	return node, nil
}

// key returns the full label key for a labels-v1 key.
func key(k string) string { return topo.DefaultPrefix + k }

// gpuIndices returns the whole-GPU indices of the extender's `gputopo.dev/gpus` annotation
// ("0,3", MIG entries "mig:<gpu>:<profile>@<start>" skipped).
func gpuIndices(v string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(v, ",") {
		f = strings.TrimSpace(f)
		if strings.HasPrefix(f, "mig:") {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("annotation %q: %w", v, err)
		}
		out = append(out, n)
	}
	return out, nil
}
