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
	s.createCliqueDraNodes(map[string][]int{
		"x-a": {0, 1, 5, 2, 4, 3, 6, 7},
		"y-a": {4, 5, 0, 1, 2, 3, 6, 7},
	})

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
	claims := map[string]string{}
	for _, member := range members {
		s.expectBoundTo(member, good)
		claims[member] = s.extendedResourceClaim(member)
	}
	// The predicted first-fit pairs, one per member: GPUs 4-5 and 0-1.
	s.expectClaimPairs(good, claims, [][2]int{{4, 5}, {0, 1}})
	s.waitScrapeValue("gpu_topology_extender_groups_placed_total",
		map[string]string{"level": cliqueLabel, "placement": "whole"}, wholeBefore+1)
}

// draGroupClaimTemplates: a pod group whose members ask through `claim-template --gpus 2` (tiers
// same-pcie-root, same-numa-node, any) on DRA nodes (docs/groups.md, "DRA nodes"). Two DGX-1V DRA
// nodes, each alone in an NVLink clique, both listing their GPUs 0 5 1 4 2 7 3 6 (PCIe root per
// quad 0-3, 4-7, each quad all-NVLink): "2 GPUs" would take the PCIe pair 0-5 first, the tiers take
// 0-1, then 5-4, then 2-3. The planner plans the three members by their claims' first-fit, one
// after another: the tightest clique by name (x, both hold six GPUs), and kube-scheduler's DRA
// allocator gives the claims exactly the predicted pairs. The group counts as planned and placed
// whole; before tiered claims were planned, such members were placed one by one and the counter
// stayed put.
func draGroupClaimTemplates(s *scenarioEnv) {
	if !groupsRunHere(s) || !s.mode.watchesCluster() {
		return
	}
	class := s.name + "-gpu"
	s.createDeviceClass(class)
	order := []int{0, 5, 1, 4, 2, 7, 3, 6}
	s.createCliqueDraNodes(map[string][]int{"x-a": order, "y-a": order})
	template := s.createGeneratedTemplate("pairs", class, "--gpus", "2")

	planned := s.name + "-x-a"
	wholeBefore := s.scrapeValue("gpu_topology_extender_groups_placed_total",
		map[string]string{"level": cliqueLabel, "placement": "whole"})
	const binds = "gpu_topology_extender_dra_bind_predictions_total"
	mismatchBefore := s.scrapeValue(binds, map[string]string{"result": "mismatch"})
	members := map[string]string{} // pod -> its claim
	for i := range 3 {
		pod := s.newClaimPod(fmt.Sprintf("tiered-%d", i), "", template)
		pod.Annotations = map[string]string{key("group"): "tiered", key("group-size"): "3"}
		s.createPod(pod)
		members[pod.Name] = s.makeTemplateClaim(pod.Name, template)
	}
	for member := range members {
		s.expectBoundTo(member, planned)
	}
	// The predicted first-fit sets of the tiers, one per member: GPUs 0-1, 4-5 and 2-3, each
	// NVLinked.
	s.expectClaimPairs(planned, members, [][2]int{{0, 1}, {4, 5}, {2, 3}})
	s.waitScrapeValue("gpu_topology_extender_groups_placed_total",
		map[string]string{"level": cliqueLabel, "placement": "whole"}, wholeBefore+1)
	// Each member bound beside its group's holds: the bind's prediction frees them for it (a
	// match, or unknown when the bind comes before the claim watch), never a mismatch.
	if got := s.scrapeValue(binds, map[string]string{"result": "mismatch"}); got != mismatchBefore {
		s.t.Errorf("%s{result=mismatch}: %v, was %v before the members bound", binds, got, mismatchBefore)
	}
}

// createCliqueDraNodes creates a DGX-1V DRA node per entry ("<clique>-<n>", labelled with the
// NVLink clique "nvl-<clique>"), publishes its slice with its GPUs in the entry's order, and waits
// until the extender and kube-scheduler have the slices.
func (s *scenarioEnv) createCliqueDraNodes(orders map[string][]int) {
	s.t.Helper()
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
}

// expectClaimPairs reads each member's claim (pod -> claim) and checks that together they were
// allocated exactly the given GPU pairs on node, one pair per member (device names by minor).
func (s *scenarioEnv) expectClaimPairs(node string, claims map[string]string, want [][2]int) {
	s.t.Helper()
	pairs := map[string]bool{}
	for member, claim := range claims {
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
		s.t.Logf("%s: claim %s allocated %v on %s", member, claim, devices, node)
	}
	for _, gpus := range want {
		pair := []string{fmt.Sprintf("gpu-%d", draMinor(gpus[0])), fmt.Sprintf("gpu-%d", draMinor(gpus[1]))}
		slices.Sort(pair)
		if !pairs[strings.Join(pair, ",")] {
			s.t.Errorf("no member got the NVLink pair %v (GPUs %d-%d); got %v", pair, gpus[0], gpus[1], pairs)
		}
	}
}
