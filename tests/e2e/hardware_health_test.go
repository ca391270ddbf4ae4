package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"gpu-topology-extender/tests/e2e/internal/topo"
)

// Failing hardware (docs/health.md) against a real kube-scheduler: the node agent marks NVLink
// pairs degraded while pods arrive, and the extender steers multi-GPU pods off them.

// nvlinkDegrading: two DGX-1Vs and four RTX 4090 boxes (every pair SYS). "worn" has GPUs 0 and 1
// in use, so while it is healthy binpack sends a 2-GPU pod there (NVLink on both DGX-1Vs, worn
// fuller). Then the agent marks every NVLink pair among worn's free GPUs degraded (`nvlh`): the
// next three 2-GPU pods go to "fresh" (worn's sets now score as their PCIe path, below fresh's
// NVLink), explain names worn's degraded pair, a 1-GPU pod held to worn by its node selector still
// lands there (a single GPU has no link to avoid), and the marked-pairs gauge counts the pairs. A
// blind extender picks among six nodes four times: (1/6)^4 = 0.08%.
const nvlinkDegradingOdds = 1.0 / (6 * 6 * 6 * 6)

// The NVLink pairs of a DGX-1V among GPUs 2-7 (nvl 1122000210200200100001112212).
var dgx1vNvlinkPairsFrom2 = [][2]int{{2, 3}, {2, 6}, {3, 7}, {4, 5}, {4, 6}, {4, 7}, {5, 6}, {5, 7}, {6, 7}}

func nvlinkDegrading(s *scenarioEnv) {
	if !s.mode.mode.cache {
		s.t.Skip("nodes mode: the marks are read the same way; the gauge this checks needs the cache")
	}
	var specs []nodeSpec
	for _, name := range []string{"rtx-a", "rtx-b", "rtx-c", "rtx-d"} {
		specs = append(specs, nodeSpec{name: name, capture: rtx4090})
	}
	specs = append(specs,
		nodeSpec{name: "worn", capture: dgx1V, state: topo.State{Used: "11000000"}},
		nodeSpec{name: "fresh", capture: dgx1V})
	s.createNodes(specs...)
	worn, fresh := s.name+"-worn", s.name+"-fresh"

	// Healthy: the fuller DGX-1V wins.
	s.expectPlacedAndDelete(s.newPod("before", "nvidia.com/gpu", 2), worn)

	// The agent's next pass: every NVLink pair among worn's free GPUs degraded.
	marks := []byte(strings.Repeat("1", 28))
	for _, p := range dgx1vNvlinkPairsFrom2 {
		marks[pairIndex(p[0], p[1], 8)] = 'd'
	}
	s.patchNodeLabels(worn, map[string]string{key("nvlh"): string(marks)})
	s.waitScrapeValue("gpu_topology_extender_marked_nvlink_pairs",
		map[string]string{"pool": models[dgx1V], "state": "degraded"}, float64(len(dgx1vNvlinkPairsFrom2)))

	for i := 0; i < 3; i++ {
		pod := s.newPod(fmt.Sprintf("after-%d", i), "nvidia.com/gpu", 2)
		s.createPod(pod)
		s.expectBoundTo(pod.Name, fresh)
		if i == 0 {
			s.expectExplainDegraded(pod.Name, worn)
		}
	}

	// One GPU has no pair: a degraded link does not keep a 1-GPU pod off worn.
	single := s.newPod("single", "nvidia.com/gpu", 1)
	single.Spec.NodeSelector["kubernetes.io/hostname"] = worn
	s.createPod(single)
	s.expectBoundTo(single.Name, worn)
}

// pairIndex is labels-v1's pair order (docs/labels-v1.md): row-major upper triangle.
func pairIndex(i, j, n int) int {
	return i*(2*n-i-1)/2 + (j - i - 1)
}

// patchNodeLabels merges labels into a node, as the node agent's JSON merge patch does.
func (s *scenarioEnv) patchNodeLabels(node string, labels map[string]string) {
	s.t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := apiContext()
	defer cancel()
	if _, err := client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		s.t.Fatalf("patch node %s: %v", node, err)
	}
}

// expectExplainDegraded asks explain about the pod and expects node's entry to name a degraded
// NVLink pair of the set the pod would get there, and the class that set is scored as.
func (s *scenarioEnv) expectExplainDegraded(pod, node string) {
	s.t.Helper()
	var view struct {
		Nodes []struct {
			Name     string `json:"name"`
			Degraded *struct {
				ScoredAs string `json:"scoredAs"`
				Links    []struct {
					GPUs  []int  `json:"gpus"`
					State string `json:"state"`
				} `json:"links"`
			} `json:"degraded"`
		} `json:"nodes"`
	}
	ctx, cancel := apiContext()
	defer cancel()
	body, err := s.extenderCall(ctx, http.MethodGet, "/explain?pod="+url.QueryEscape(namespace+"/"+pod), nil)
	if err != nil {
		s.t.Fatalf("explain: %v", err)
	}
	if err := json.Unmarshal(body, &view); err != nil {
		s.t.Fatalf("explain: %v", err)
	}
	for _, n := range view.Nodes {
		if n.Name != node {
			continue
		}
		if n.Degraded == nil || len(n.Degraded.Links) == 0 || n.Degraded.Links[0].State != "degraded" {
			s.t.Fatalf("explain on %s names no degraded link: %+v", node, n.Degraded)
		}
		if n.Degraded.ScoredAs == "nvlink" {
			s.t.Errorf("explain on %s: the set is scored as %q, want its PCIe path", node, n.Degraded.ScoredAs)
		}
		s.t.Logf("explain on %s: scored as %s, links %+v", node, n.Degraded.ScoredAs, n.Degraded.Links)
		return
	}
	s.t.Fatalf("explain lists no node %s", node)
}
