package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpu-topology-extender/tests/e2e/internal/topo"
)

// scenario is one end-to-end case; run.sh counts each (mode, scenario) pair as one result.
type scenario struct {
	name string
	run  func(s *scenarioEnv)
	// blindPass is the chance that a GPU-blind extender (keeps every node, scores all alike) passes
	// the scenario. With an extender configured, kube-scheduler v1.37 gives every scored node a
	// random tie-breaker (schedule_one.go, prioritizeNodes), so among equally scored nodes it picks
	// one uniformly at random, whatever the order the nodes were created in. A placement scenario
	// therefore offers n equally attractive nodes to a blind extender and repeats the placement k
	// times: it passes blind with chance (1/n)^k, kept below 1%. 0: a blind extender always fails.
	// 1: not a placement scenario (a safety check that any sane extender passes); the control mode
	// skips these.
	blindPass float64
	// needs: what the control plane must serve for the scenario to mean anything (nil: every
	// release of the version matrix). A scenario whose needs are not met is skipped with the
	// reason, as the extender runs without the feature on that release.
	needs *apiNeed
}

var scenarios = []scenario{
	{"nvlink-beats-spread", nvlinkBeatsSpread, nvlinkBeatsSpreadOdds, nil},
	{"keep-nvlink-pair", keepNVLinkPair, keepNVLinkPairOdds, nil},
	{"mig-legal-placement", migLegalPlacement, 0, nil},
	{"too-few-free-gpus", tooFewFreeGPUs, 0, nil},
	{"sharing-exclusive", sharingExclusive, sharingExclusiveOdds, nil}, // sharing_test.go
	{"sharing-last-replica", sharingLastReplica, 0, nil},               // sharing_test.go
	{"sharing-mig-replicas", sharingMigReplicas, 0, nil},               // sharing_test.go
	{"sharing-agent-config", sharingAgentConfig, 0, nil},               // sharing_test.go
	// Reads the extender's `nodes`: skipped with the control.
	{"sharing-agent-tenants", sharingAgentTenants, 1, nil}, // sharing_test.go
	{"malformed-labels", malformedLabels, malformedLabelsOdds, nil},
	{"burst-50", burst50, 1, nil},
	{"back-to-back-100", backToBack100, 1, nil},
	{"bind-annotated-atomically", bindAnnotatedAtomically, 1, nil},            // bind_test.go
	{"bind-wrong-uid-refused", bindWrongUIDRefused, 1, nil},                   // bind_test.go
	{"preempt-on-full-node", preemptOnFullNode, 1, nil},                       // preempt_test.go
	{"preempt-frees-one-quad", preemptFreesOneQuad, 0, nil},                   // preempt_test.go
	{"agent-labels-node", agentLabelsNode, 0.5, nil},                          // agent_test.go
	{"chart-manifests-dry-run", chartManifestsDryRun, 1, nil},                 // chart_manifests_test.go
	{"kubectl-plugin", kubectlPlugin, 1, nil},                                 // kubectl_plugin_test.go
	{"regret-node-selector", regretNodeSelector, 1, nil},                      // topology_health_test.go
	{"stranded-sets-move", strandedSetsMove, 1, nil},                          // topology_health_test.go
	{"dra-first-fit-nvlink", draPlacement, draPlacementOdds, nil},             // dra_test.go
	{"dra-claim-templates", claimTemplateTiers, 0, nil},                       // dra_templates_test.go
	{"dra-taint-rule", draTaintRule, draTaintRuleOdds, &needDeviceTaintRules}, // dra_taint_rules_test.go
	// One node: the island is DRA's choice, a blind extender passes too (dra_companion_test.go).
	{"dra-companion-island", draCompanionIsland, 1, &needOptionalNodeOperations},
	// Read the extender's metrics: skipped with the control, like the other scenarios that do.
	{"groups-gang-off", groupsGangOff, 1, nil},                             // groups_test.go
	{"groups-gang-on", groupsGangOn, 1, &needPodGroups},                    // groups_test.go
	{"groups-one-model", groupsOneModel, groupsOneModelOdds, nil},          // groups_test.go
	{"nvlink-degrading", nvlinkDegrading, nvlinkDegradingOdds, nil},        // hardware_health_test.go
	{"dra-group-first-fit", draGroupFirstFit, 1, &needDRAExtendedResource}, // dra_groups_test.go
	{"dra-group-claim-templates", draGroupClaimTemplates, 1, nil},          // dra_groups_test.go
	// One node: kube-scheduler's allocator decides which two pods share the device, so a blind
	// extender places them alike; the scenario reads the extender's metrics and explain, so the
	// control skips it (dra_capacity_test.go).
	{"dra-consumable-capacity", draConsumableCapacity, 1, &needDRAConsumableCapacity},
	// The chart-identity mode's checks of the chart's RBAC, after everything else ran
	// (chart_rbac_test.go).
	{chartGrantsAllUsedName, chartGrantsAllUsed, 1, nil},
	{"chart-identities-never-forbidden", chartIdentitiesNeverForbidden, 1, nil},
}

// TestE2E runs every scenario in every selected mode. If a mode cannot start, its scenarios still
// appear, failed, so the pass/fail count stays comparable between runs. In control mode
// (GTE_E2E_CONTROL=noop) only the scenarios a blind extender should fail run.
func TestE2E(t *testing.T) {
	for _, m := range cfg.modes {
		t.Run(m.name, func(t *testing.T) {
			env, err := startMode(t, m)
			if err != nil {
				t.Errorf("mode %s: %v", m.name, err)
				env = nil
			}
			list := scenarios
			if m.ha {
				list = haScenarios
			}
			for _, sc := range list {
				if env != nil {
					env.listed = append(env.listed, sc.name)
				}
			}
			for _, sc := range list {
				t.Run(sc.name, func(t *testing.T) {
					if cfg.control != "" && sc.blindPass >= 1 {
						t.Skipf("control mode: not a placement scenario")
					}
					if why := sc.needs.unmet(); why != "" {
						t.Skipf("Kubernetes %s: %s", cp.Release.Version, why)
					}
					if env == nil {
						t.Fatalf("mode %s did not start (see the error above)", m.name)
					}
					if !processAlive(env) {
						t.Fatalf("a process died before this scenario: %s", processStates(env))
					}
					if cfg.control != "" {
						t.Logf("control mode: a GPU-blind extender passes this with chance %.2f%%", 100*sc.blindPass)
					}
					env.ran[sc.name] = true
					sc.run(newScenarioEnv(t, env, sc.name))
				})
			}
		})
	}
}

// processAlive reports whether every process the scenario depends on is still running.
func processAlive(env *modeEnv) bool {
	for _, p := range env.processes() {
		if p.HasExited() {
			return false
		}
	}
	return true
}

// nvlinkBeatsSpread: 2- and 4-GPU pods go to the DGX-1V, whose free GPUs include NVLink-connected
// pairs and a fully NVLinked quad, not to any of four RTX 4090 boxes, which have more free GPUs but
// connect every pair only across the CPU interconnect (SYS). The pods run one after the other:
// 2, 4, 2, 4 GPUs. A blind extender picks among 5 equal nodes 4 times: (1/5)^4 = 0.16%.
const nvlinkBeatsSpreadOdds = 1.0 / (5 * 5 * 5 * 5)

func nvlinkBeatsSpread(s *scenarioEnv) {
	var specs []nodeSpec
	for _, name := range []string{"rtx-a", "rtx-b", "rtx-c", "rtx-d"} {
		specs = append(specs, nodeSpec{name: name, capture: rtx4090})
	}
	s.createNodes(append(specs, nodeSpec{name: "dgx1v", capture: dgx1V, state: topo.State{Used: "00000100"}})...)
	want := s.name + "-dgx1v"
	for i, gpus := range []int64{2, 4, 2, 4} {
		s.expectPlacedAndDelete(s.newPod(fmt.Sprintf("gpu%d-%d", gpus, i), "nvidia.com/gpu", gpus), want)
	}
}

// keepNVLinkPair: a 1-GPU pod takes the lone free GPU of one node rather than break the last free
// NVLink pair (GPUs 0 and 1) of any of five others. Three pods, one after the other; a blind
// extender picks among 6 equal nodes 3 times: (1/6)^3 = 0.46%.
const keepNVLinkPairOdds = 1.0 / (6 * 6 * 6)

func keepNVLinkPair(s *scenarioEnv) {
	pair := topo.State{Used: "00111111"}
	var specs []nodeSpec
	for _, name := range []string{"pair-a", "pair-b", "pair-c", "pair-d", "pair-e"} {
		specs = append(specs, nodeSpec{name: name, capture: dgx1V, state: pair})
	}
	s.createNodes(append(specs, nodeSpec{name: "lone", capture: dgx1V, state: topo.State{Used: "11111110"}})...)
	for i := range 3 {
		s.expectPlacedAndDelete(s.newPod(fmt.Sprintf("gpu1-%d", i), "nvidia.com/gpu", 1), s.name+"-lone")
	}
}

// expectPlacedAndDelete creates the pod, asserts it is bound to want, then deletes it and waits
// until everyone has seen it go, so the next trial starts from the same free GPUs.
func (s *scenarioEnv) expectPlacedAndDelete(pod *corev1.Pod, want string) {
	s.t.Helper()
	s.createPod(pod)
	s.expectBoundTo(pod.Name, want)
	s.deletePodAndWait(pod.Name)
}

// migLegalPlacement: a 3g.40gb pod goes to the A100 whose GPU 0 holds a free 3g instance at slice 4,
// not to the five A100s whose GPU 0 has more free capacity by count (free 1g instances at slices 0
// and 5, six slices unpartitioned) but no legal 3g placement: 3g starts at slice 0 or 4 and spans
// four slices. All six advertise one nvidia.com/mig-3g.40gb, so only the extender can tell them
// apart. Three pods one after the other: a blind extender passes that part with chance
// (1/6)^3 = 0.46%. Then a pod pinned to a fragmented node must stay Pending with the extender's MIG
// reason, which a blind extender never passes (it binds the pod): blind chance 0.
func migLegalPlacement(s *scenarioEnv) {
	mig := func(name, tokens string) nodeSpec {
		return nodeSpec{
			name: name, capture: hgxA100, gpus: 7,
			extra: map[string]int64{"nvidia.com/mig-3g.40gb": 1},
			state: topo.State{Used: "m1111111", MIG: "10000000", MIGGIs: map[int]string{0: tokens}},
		}
	}
	var specs []nodeSpec
	for _, name := range []string{"frag-a", "frag-b", "frag-c", "frag-d", "frag-e"} {
		specs = append(specs, mig(name, "00f05f"))
	}
	s.createNodes(append(specs, mig("fits", "00u01u24f"))...)
	for i := range 3 {
		s.expectPlacedAndDelete(s.newPod(fmt.Sprintf("mig3g-%d", i), "nvidia.com/mig-3g.40gb", 1), s.name+"-fits")
	}

	pinned := s.newPod("mig3g-pinned", "nvidia.com/mig-3g.40gb", 1)
	pinned.Spec.NodeSelector["kubernetes.io/hostname"] = s.name + "-frag-a"
	s.createPod(pinned)
	s.expectUnschedulable(pinned.Name, reasonMIGPlacement)
}

// tooFewFreeGPUs: both nodes advertise 8 allocatable GPUs, so kube-scheduler's own fit check passes,
// but their labels show at most 4 usable (used or unhealthy GPUs). A 6-GPU pod stays Pending and the
// extender's reason reaches the FailedScheduling event. A blind extender lets the pod bind: blind
// chance 0.
func tooFewFreeGPUs(s *scenarioEnv) {
	s.createNodes(
		nodeSpec{name: "dgx1v", capture: dgx1V, state: topo.State{Used: "11100000", Health: "11111110"}},
		nodeSpec{name: "a100", capture: hgxA100, state: topo.State{Used: "11111000"}},
	)
	pod := s.newPod("gpu6", "nvidia.com/gpu", 6)
	s.createPod(pod)
	s.expectUnschedulable(pod.Name, reasonTooFewFreeGPUs)
}

// malformedLabels: nodes whose labels-v1 values are malformed in different ways must not crash the
// extender or attract a 2-GPU pod; the pod binds to the one well-labelled node, and the extender
// logs a line naming each malformed node. Three pods one after the other among 8 nodes: a blind
// extender passes with chance (1/8)^3 = 0.20%.
const malformedLabelsOdds = 1.0 / (8 * 8 * 8)

func malformedLabels(s *scenarioEnv) {
	bad := map[string]func(l map[string]string){
		"nvl-short":   func(l map[string]string) { l[key("nvl")] = l[key("nvl")][1:] },
		"pci-char":    func(l map[string]string) { l[key("pci")] = "X" + l[key("pci")][1:] },
		"n-wrong":     func(l map[string]string) { l[key("n")] = "9" },
		"used-long":   func(l map[string]string) { l[key("used")] += "0" },
		"v-two":       func(l map[string]string) { l[key("v")] = "2" },
		"gen-word":    func(l map[string]string) { l[key("gen")] = "soon" },
		"fabric-ring": func(l map[string]string) { l[key("fabric")] = "ring" },
	}
	var specs []nodeSpec
	for name, mutate := range bad {
		specs = append(specs, nodeSpec{name: name, capture: dgx1V, mutate: mutate})
	}
	s.createNodes(append(specs, nodeSpec{name: "good", capture: dgx1V})...)
	for i := range 3 {
		s.expectPlacedAndDelete(s.newPod(fmt.Sprintf("gpu2-%d", i), "nvidia.com/gpu", 2), s.name+"-good")
	}
	if s.mode.extender == nil {
		return // control mode: the no-op logs nothing
	}

	// The line comes from the extender's cluster observer (cache mode), which runs on an interval,
	// or from the request that first carried the node (nodes mode): wait for it.
	for name := range bad {
		node := s.name + "-" + name
		err := s.poll(seenTimeout, func(context.Context) (bool, error) {
			return anyLineContains(s.mode.extender.Grep(node), logMalformedLabels), nil
		})
		if err != nil {
			s.t.Errorf("extender log has no line naming %s and containing %q within %s", node, logMalformedLabels, seenTimeout)
		}
	}
	if s.mode.extender.HasExited() {
		s.t.Errorf("extender exited (%v)", s.mode.extender.ExitErr())
	}
}

func anyLineContains(lines []string, sub string) bool {
	for _, l := range lines {
		if strings.Contains(l, sub) {
			return true
		}
	}
	return false
}

// burst50: 50 one-GPU pods created at once all bind, and no GPU is handed out twice: per node the
// bound pods request no more than the node's allocatable GPUs, and where the extender records the
// GPU set it chose (annotation gputopo.dev/gpus), the sets on one node are disjoint.
func burst50(s *scenarioEnv) {
	const pods = 50
	var specs []nodeSpec
	for i, c := range []string{dgx1V, dgx1V, hgxA100, hgxA100, rtx4090, rtx4090, pciePHB, pciePXB} {
		specs = append(specs, nodeSpec{name: fmt.Sprintf("n%d", i), capture: c})
	}
	s.createNodes(specs...) // 64 GPUs
	s.createPodsConcurrently(pods, 10)

	bound := s.waitAllBound(5 * time.Minute)
	s.checkNoGPUGivenTwice(bound)
}

// backToBack100: 100 one-GPU pods scheduled one after another onto a small cluster (two DGX-1V,
// 16 GPUs) while the oldest is deleted once 12 are alive, so bound, reserved and freed GPUs churn
// the whole time. After every bind the live pods never share a GPU (by the extender's annotation,
// in cache mode) and never exceed a node's allocatable.
func backToBack100(s *scenarioEnv) {
	const pods, window = 100, 12
	s.createNodes(nodeSpec{name: "a", capture: dgx1V}, nodeSpec{name: "b", capture: dgx1V})
	var live []string
	for i := range pods {
		pod := s.newPod(fmt.Sprintf("q%03d", i), "nvidia.com/gpu", 1)
		s.createPod(pod)
		s.waitBound(pod.Name)
		live = append(live, pod.Name)
		if len(live) > window {
			s.deletePod(live[0])
			live = live[1:]
		}
		s.checkNoGPUGivenTwice(s.boundLivePods())
		if s.t.Failed() {
			s.t.FailNow()
		}
	}
}

// boundLivePods lists the scenario's bound pods that are not being deleted.
func (s *scenarioEnv) boundLivePods() []corev1.Pod {
	s.t.Helper()
	ctx, cancel := apiContext()
	defer cancel()
	list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{
		LabelSelector: scenarioLabel + "=" + s.name,
	})
	if err != nil {
		s.t.Fatalf("list pods: %v", err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// createPodsConcurrently creates n one-GPU pods with a few parallel creators, so they arrive at the
// scheduler as one burst.
func (s *scenarioEnv) createPodsConcurrently(n, workers int) {
	s.t.Helper()
	for _, err := range s.createBurst("p", n, workers) {
		s.t.Error(err)
	}
	if s.t.Failed() {
		s.t.FailNow()
	}
}

// createBurst creates n one-GPU pods named PREFIX00, PREFIX01, ... with parallel creators and
// returns the creations that failed.
func (s *scenarioEnv) createBurst(prefix string, n, workers int) []error {
	return s.createOneGPUPods(s.burstNames(prefix, n), workers)
}

// burstNames names n pods PREFIX00, PREFIX01, ... and remembers them for cleanup.
func (s *scenarioEnv) burstNames(prefix string, n int) []string {
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("%s%02d", prefix, i))
		s.pods = append(s.pods, s.name+"-"+names[i])
	}
	return names
}

// createOneGPUPods creates the named one-GPU pods with parallel creators and returns the
// creations that failed. Safe to run on a goroutine of its own.
func (s *scenarioEnv) createOneGPUPods(list []string, workers int) []error {
	names := make(chan string, len(list))
	for _, name := range list {
		names <- name
	}
	close(names)
	var wg sync.WaitGroup
	errs := make(chan error, len(list))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range names {
				pod := s.newPod(name, "nvidia.com/gpu", 1)
				ctx, cancel := apiContext()
				_, err := client.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{})
				cancel()
				if err != nil {
					errs <- fmt.Errorf("create %s: %w", pod.Name, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	var out []error
	for err := range errs {
		out = append(out, err)
	}
	return out
}

// waitAllBound waits until every pod of the scenario is bound and returns them.
func (s *scenarioEnv) waitAllBound(timeout time.Duration) []corev1.Pod {
	s.t.Helper()
	var pods []corev1.Pod
	unbound := -1
	err := s.poll(timeout, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{
			LabelSelector: scenarioLabel + "=" + s.name,
		})
		if err != nil {
			return false, err
		}
		pods, unbound = list.Items, 0
		for _, p := range pods {
			if p.Spec.NodeName == "" {
				unbound++
			}
		}
		return len(pods) == len(s.pods) && unbound == 0, nil
	})
	if err != nil {
		s.t.Fatalf("%d of %d pods still unbound after %s: %v", unbound, len(s.pods), timeout, err)
	}
	return pods
}

// checkNoGPUGivenTwice checks GPU accounting per node, by count and, where annotated, by index.
func (s *scenarioEnv) checkNoGPUGivenTwice(pods []corev1.Pod) {
	s.t.Helper()
	ctx, cancel := apiContext()
	defer cancel()
	requested := map[string]int64{}
	owner := map[string]map[int]string{} // node -> GPU index -> pod
	annotated := 0
	for _, p := range pods {
		q := p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"]
		requested[p.Spec.NodeName] += q.Value()
		v, ok := p.Annotations[key("gpus")]
		if !ok {
			continue
		}
		annotated++
		idx, err := gpuIndices(v)
		if err != nil {
			s.t.Errorf("pod %s: %v", p.Name, err)
			continue
		}
		if int64(len(idx)) != q.Value() {
			s.t.Errorf("pod %s requests %d GPUs but is annotated with %q", p.Name, q.Value(), v)
		}
		if owner[p.Spec.NodeName] == nil {
			owner[p.Spec.NodeName] = map[int]string{}
		}
		for _, i := range idx {
			if prev, dup := owner[p.Spec.NodeName][i]; dup {
				s.t.Errorf("GPU %d of node %s given to both %s and %s", i, p.Spec.NodeName, prev, p.Name)
			}
			owner[p.Spec.NodeName][i] = p.Name
		}
	}
	for node, n := range requested {
		got, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			s.t.Errorf("node %s: %v", node, err)
			continue
		}
		alloc := got.Status.Allocatable["nvidia.com/gpu"]
		if n > alloc.Value() {
			s.t.Errorf("node %s: bound pods request %d GPUs, allocatable %d", node, n, alloc.Value())
		}
	}
	s.t.Logf("%d pods on %d nodes; %d carry the %s annotation", len(pods), len(requested), annotated, key("gpus"))
}
