package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"gpu-topology-extender/tests/e2e/internal/promtext"
	"gpu-topology-extender/tests/e2e/internal/topo"
)

// The topology-health figures (docs/topology-health.md) against a real kube-scheduler: placement
// regret for a pod kept off the better node, and the stranded-set gauges as a pod binds and leaves.
// Both need the extender's cluster cache (cache and chart modes).

// rackLabel keeps the regret scenario's pod off the DGX-1V: a node selector is the user's
// constraint, applied by kube-scheduler before the extender sees the nodes.
const rackLabel = "e2e.gputopo.dev/rack"

// placementView is the part of GET /explain?pod= placement regret adds.
type placementView struct {
	Placement *struct {
		Node string `json:"node"`
		Got  *struct {
			WeakestLink   string `json:"weakestLink"`
			BandwidthGBps int    `json:"bandwidthGBps"`
		} `json:"got"`
		Best *struct {
			WeakestLink   string `json:"weakestLink"`
			BandwidthGBps int    `json:"bandwidthGBps"`
		} `json:"best"`
		Regret         *float64 `json:"regret"`
		Reason         string   `json:"reason"`
		BelowBestClass bool     `json:"belowBestClass"`
		ClassReason    string   `json:"belowBestClassReason"`
	} `json:"placement"`
}

// regretNodeSelector: a 2-GPU pod whose node selector allows only two Tesla T4 boxes (PCIe, PIX
// pairs on Gen3: 16 GB/s one way) while a DGX-1V with every NVLink pair free (NV2: 50 GB/s) sits
// next to them. The pod binds to a T4 box; its explain output then shows positive regret,
// 1 - 16/50 = 0.68, because nothing it could use was better (no_better_fit), and the
// below-best-class counter for k=2 and that reason moves by one.
func regretNodeSelector(s *scenarioEnv) {
	if !s.mode.mode.cache {
		s.t.Skip("nodes mode: no cluster cache, so no pod is seen bound")
	}
	inRack := func(l map[string]string) { l[rackLabel] = "pcie" }
	s.createNodes(
		nodeSpec{name: "dgx", capture: dgx1V},
		nodeSpec{name: "t4-a", capture: pciePHB, mutate: inRack},
		nodeSpec{name: "t4-b", capture: pciePHB, state: topo.State{Used: "10000000"}, mutate: inRack},
	)
	belowBefore := s.scrapeValue("gpu_topology_extender_placement_below_best_class_total",
		map[string]string{"k": "2", "reason": "no_better_fit"})
	pod := s.newPod("pair", "nvidia.com/gpu", 2)
	pod.Spec.NodeSelector[rackLabel] = "pcie"
	s.createPod(pod)
	node := s.waitBound(pod.Name)
	if !strings.HasSuffix(node, "-t4-a") && !strings.HasSuffix(node, "-t4-b") {
		s.t.Fatalf("pod bound to %s, outside its node selector", node)
	}

	// The extender reports the placement once its watch has seen the pod bound.
	var view placementView
	err := s.poll(seenTimeout, func(ctx context.Context) (bool, error) {
		v, err := s.explainPod(ctx, pod.Name)
		if err != nil {
			return false, nil
		}
		view = v
		return v.Placement != nil && v.Placement.Regret != nil, nil
	})
	if err != nil {
		s.t.Fatalf("explain never showed the pod's placement regret: %+v", view.Placement)
	}
	p := view.Placement
	if p.Node != node {
		s.t.Errorf("explain placement node %q, pod bound to %q", p.Node, node)
	}
	if p.Best == nil || p.Best.WeakestLink != "nvlink" || p.Best.BandwidthGBps != 50 {
		s.t.Errorf("best set any node offered: %+v, want the DGX-1V's NV2 pair (nvlink, 50 GB/s)", p.Best)
	}
	if p.Got == nil || p.Got.WeakestLink == "nvlink" || p.Got.BandwidthGBps >= 50 {
		s.t.Errorf("the pod got %+v, want a PCIe pair below 50 GB/s", p.Got)
	}
	if *p.Regret <= 0 {
		s.t.Errorf("regret %v, want positive", *p.Regret)
	}
	if p.Reason != "no_better_fit" || !p.BelowBestClass || p.ClassReason != "no_better_fit" {
		s.t.Errorf("reason %q, below best class %v (%q); want no_better_fit for both", p.Reason,
			p.BelowBestClass, p.ClassReason)
	}
	s.t.Logf("placement: got %+v, best %+v, regret %.3f, %s", *p.Got, *p.Best, *p.Regret, p.Reason)
	s.waitScrapeValue("gpu_topology_extender_placement_below_best_class_total",
		map[string]string{"k": "2", "reason": "no_better_fit"}, belowBefore+1)
}

// strandedSetsMove: on an empty DGX-1V the two all-NVLink quads are free and no GPU is stranded
// for 4-GPU pods. A 1-GPU pod takes GPU 0 (the device plugin's first free GPU): quad {0,1,2,3} is
// broken, one free NVLink quad is left and GPUs 1-3 are stranded for 4-GPU pods. When the pod
// leaves, the figures come back.
func strandedSetsMove(s *scenarioEnv) {
	if !s.mode.mode.cache {
		s.t.Skip("nodes mode: no cluster cache, so no fragmentation gauges")
	}
	s.createNodes(nodeSpec{name: "dgx", capture: dgx1V})
	pool := map[string]string{"pool": models[dgx1V], "k": "4"}
	s.waitScrapeValue("gpu_topology_extender_fragmentation_nvlink_sets", pool, 2)
	s.waitScrapeValue("gpu_topology_extender_fragmentation_stranded_gpus", pool, 0)

	pod := s.newPod("one", "nvidia.com/gpu", 1)
	s.createPod(pod)
	s.waitBound(pod.Name)
	s.waitScrapeValue("gpu_topology_extender_fragmentation_nvlink_sets", pool, 1)
	s.waitScrapeValue("gpu_topology_extender_fragmentation_stranded_gpus", pool, 3)
	s.waitScrapeValue("gpu_topology_extender_fragmentation_hostable_pods", pool, 1)

	s.deletePodAndWait(pod.Name)
	s.waitScrapeValue("gpu_topology_extender_fragmentation_nvlink_sets", pool, 2)
	s.waitScrapeValue("gpu_topology_extender_fragmentation_stranded_gpus", pool, 0)
}

// explainPod GETs the extender's explain of one of the scenario's pods.
func (s *scenarioEnv) explainPod(ctx context.Context, pod string) (placementView, error) {
	var view placementView
	body, err := s.extenderCall(ctx, http.MethodGet, "/explain?pod="+url.QueryEscape(namespace+"/"+pod), nil)
	if err != nil {
		return view, err
	}
	return view, json.Unmarshal(body, &view)
}

// scrapeValue is one value of the extender's /metrics now (the sum of the matching series).
func (s *scenarioEnv) scrapeValue(name string, match map[string]string) float64 {
	s.t.Helper()
	ctx, cancel := apiContext()
	defer cancel()
	samples, err := promtext.Scrape(ctx, s.mode.metricsURL)
	if err != nil {
		s.t.Fatalf("scrape: %v", err)
	}
	return samples.Value(name, match)
}

// waitScrapeValue waits until the series reads want (the gauges follow the cache's snapshots at
// the observer's 2 s interval).
func (s *scenarioEnv) waitScrapeValue(name string, match map[string]string, want float64) {
	s.t.Helper()
	last := -1.0
	err := s.poll(seenTimeout, func(ctx context.Context) (bool, error) {
		samples, err := promtext.Scrape(ctx, s.mode.metricsURL)
		if err != nil {
			return false, nil
		}
		last = samples.Value(name, match)
		return last == want, nil
	})
	if err != nil {
		s.t.Fatalf("%s%v never read %v (last %v)", name, match, want, last)
	}
}
