package e2e

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// draGroupFirstFit: a pod group on DRA nodes (docs/groups.md, "DRA nodes"). Two DGX-1V DRA nodes in
// two NVLink cliques: "x-a" lists its GPUs 0 1 5 2 4 3 6 7, so first-fit hands a 2-GPU pod the
// NVLink pair 0-1 and the next one 5-2, across the sockets; "y-a" lists 4 5 0 1 2 3 6 7, four
// NVLink pairs in a row. A group of two `nvidia.com/gpu: 2` pods with `min-link: nvlink` fits
// clique x by free GPUs and by best sets (x-a's free GPUs hold four NVLink pairs), and x is the
// tighter fit (as many free GPUs, one node), but first-fit gives its second member a PCIe pair:
// the planner counts one NVLink slot there and plans the group in clique y, where kube-scheduler's
// DRA allocator then gives the members the predicted pairs 4-5 and 0-1.
func draGroupFirstFit(s *scenarioEnv) {
	if !groupsRunHere(s) || !s.mode.watchesCluster() {
		return
	}
	class := s.name + "-gpu"
	s.createDeviceClass(class)
	orders := map[string][]int{
		"x-a": {0, 1, 5, 2, 4, 3, 6, 7},
		"y-a": {4, 5, 0, 1, 2, 3, 6, 7},
	}
	var specs []nodeSpec
	for name := range orders {
		spec := draNodeSpec(name)
		clique := "nvl-" + strings.SplitN(name, "-", 2)[0]
		busLabels := spec.mutate
		spec.mutate = func(labels map[string]string) {
			busLabels(labels)
			labels[cliqueLabel] = clique
		}
		specs = append(specs, spec)
	}
	s.createNodes(specs...)
	for name, order := range orders {
		s.createGPUSlice(s.name+"-"+name, order)
	}
	s.waitDraCaughtUp(len(orders))

	good := s.name + "-y-a"
	wholeBefore := s.scrapeValue("gpu_topology_extender_groups_placed_total",
		map[string]string{"level": cliqueLabel, "placement": "whole"})
	var members []string
	for i := range 2 {
		pod := s.newPod(fmt.Sprintf("pair-%d", i), "nvidia.com/gpu", 2)
		pod.Annotations = map[string]string{key("group"): "pair", key("group-size"): "2", key("min-link"): "nvlink"}
		s.createPod(pod)
		members = append(members, pod.Name)
	}
	pairs := map[string]bool{}
	for _, member := range members {
		s.expectBoundTo(member, good)
		claim := s.extendedResourceClaim(member)
		ctx, cancel := apiContext()
		got, err := client.ResourceV1().ResourceClaims(namespace).Get(ctx, claim, metav1.GetOptions{})
		cancel()
		if err != nil || got.Status.Allocation == nil {
			s.t.Fatalf("claim %s of %s: not allocated (%v)", claim, member, err)
		}
		var devices []string
		for _, r := range got.Status.Allocation.Devices.Results {
			devices = append(devices, r.Device)
		}
		slices.Sort(devices)
		pairs[strings.Join(devices, ",")] = true
		s.t.Logf("%s: claim %s allocated %v on %s", member, claim, devices, good)
	}
	// The predicted first-fit pairs, one per member: GPUs 4-5 and 0-1 (device names by minor).
	for _, gpus := range [][2]int{{4, 5}, {0, 1}} {
		want := []string{fmt.Sprintf("gpu-%d", draMinor(gpus[0])), fmt.Sprintf("gpu-%d", draMinor(gpus[1]))}
		slices.Sort(want)
		if !pairs[strings.Join(want, ",")] {
			s.t.Errorf("no member got the NVLink pair %v (GPUs %d-%d); got %v", want, gpus[0], gpus[1], pairs)
		}
	}
	s.waitScrapeValue("gpu_topology_extender_groups_placed_total",
		map[string]string{"level": cliqueLabel, "placement": "whole"}, wholeBefore+1)
}
