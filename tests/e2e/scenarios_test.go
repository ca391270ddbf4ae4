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

	"gpu-topology-extender/tests/e2e/internal/cluster"
	"gpu-topology-extender/tests/e2e/internal/topo"
)

// scenario is one end-to-end case; run.sh counts each (mode, scenario) pair as one result.
type scenario struct {
	name string
	run  func(s *scenarioEnv)
}

// Placement scenarios create the node the pod should land on last. kube-scheduler v1.37 takes the
// best score from a heap built in node-list order, with no random tie-break, so equal scores go to
// an earlier node: an extender that does not tell the nodes apart fails these scenarios every time
// instead of passing by luck.
var scenarios = []scenario{
	{"nvlink-beats-spread", nvlinkBeatsSpread},
	{"keep-nvlink-pair", keepNVLinkPair},
	{"mig-legal-placement", migLegalPlacement},
	{"too-few-free-gpus", tooFewFreeGPUs},
	{"malformed-labels", malformedLabels},
	{"burst-50", burst50},
	{"back-to-back-100", backToBack100},
	{"agent-labels-node", agentLabelsNode}, // agent_test.go
}

// TestE2E runs every scenario in every selected mode. If a mode cannot start, its scenarios still
// appear, failed, so the pass/fail count stays comparable between runs.
func TestE2E(t *testing.T) {
	for _, m := range cfg.modes {
		t.Run(m.name, func(t *testing.T) {
			env, err := startMode(t, m)
			if err != nil {
				t.Errorf("mode %s: %v", m.name, err)
			}
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) {
					if env == nil {
						t.Fatalf("mode %s did not start (see the error above)", m.name)
					}
					if !processAlive(env) {
						t.Fatalf("a process died before this scenario: %s", processStates(env))
					}
					sc.run(newScenarioEnv(t, env, sc.name))
				})
			}
		})
	}
}

// processAlive reports whether every process the scenario depends on is still running.
func processAlive(env *modeEnv) bool {
	procs := append([]*cluster.Process{env.extender, env.scheduler}, cp.Processes()...)
	for _, p := range procs {
		if exited(p) {
			return false
		}
	}
	return true
}

func exited(p *cluster.Process) bool {
	select {
	case <-p.Exited():
		return true
	default:
		return false
	}
}

// nvlinkBeatsSpread: 2- and 4-GPU pods go to the DGX-1V, whose free GPUs include NVLink-connected
// pairs and a fully NVLinked quad, not to either RTX 4090 box, which has more free GPUs but connects
// every pair only across the CPU interconnect (SYS). The pods run one after the other.
func nvlinkBeatsSpread(s *scenarioEnv) {
	s.createNodes(
		nodeSpec{name: "rtx-a", capture: rtx4090},
		nodeSpec{name: "rtx-b", capture: rtx4090},
		nodeSpec{name: "dgx1v", capture: dgx1V, state: topo.State{Used: "00000100"}},
	)
	want := s.name + "-dgx1v"
	for _, gpus := range []int64{2, 4} {
		pod := s.newPod(fmt.Sprintf("gpu%d", gpus), "nvidia.com/gpu", gpus)
		s.createPod(pod)
		s.expectBoundTo(pod.Name, want)
		s.deletePodAndWait(pod.Name)
	}
}

// keepNVLinkPair: a 1-GPU pod takes the lone free GPU of one node rather than break the last free
// NVLink pair (GPUs 0 and 1) of any of three others.
func keepNVLinkPair(s *scenarioEnv) {
	pair := topo.State{Used: "00111111"}
	s.createNodes(
		nodeSpec{name: "pair-a", capture: dgx1V, state: pair},
		nodeSpec{name: "pair-b", capture: dgx1V, state: pair},
		nodeSpec{name: "pair-c", capture: dgx1V, state: pair},
		nodeSpec{name: "lone", capture: dgx1V, state: topo.State{Used: "11111110"}},
	)
	pod := s.newPod("gpu1", "nvidia.com/gpu", 1)
	s.createPod(pod)
	s.expectBoundTo(pod.Name, s.name+"-lone")
}

// migLegalPlacement: a 3g.40gb pod goes to the A100 whose GPU 0 holds a free 3g instance at slice 4,
// not to the two A100s whose GPU 0 has more free capacity by count (free 1g instances at slices 0
// and 5, six slices unpartitioned) but no legal 3g placement: 3g starts at slice 0 or 4 and spans
// four slices. All three advertise one nvidia.com/mig-3g.40gb, so only the extender can tell them
// apart. A second pod pinned to a fragmented node must stay Pending with the extender's MIG reason.
func migLegalPlacement(s *scenarioEnv) {
	mig := func(name, tokens string) nodeSpec {
		return nodeSpec{
			name: name, capture: hgxA100, gpus: 7,
			extra: map[string]int64{"nvidia.com/mig-3g.40gb": 1},
			state: topo.State{Used: "m1111111", MIG: "10000000", MIGGIs: map[int]string{0: tokens}},
		}
	}
	s.createNodes(
		mig("frag-a", "00f05f"),
		mig("frag-b", "00f05f"),
		mig("fits", "00u01u24f"),
	)
	pod := s.newPod("mig3g", "nvidia.com/mig-3g.40gb", 1)
	s.createPod(pod)
	s.expectBoundTo(pod.Name, s.name+"-fits")

	pinned := s.newPod("mig3g-pinned", "nvidia.com/mig-3g.40gb", 1)
	pinned.Spec.NodeSelector["kubernetes.io/hostname"] = s.name + "-frag-a"
	s.createPod(pinned)
	s.expectUnschedulable(pinned.Name, reasonMIGPlacement)
}

// tooFewFreeGPUs: both nodes advertise 8 allocatable GPUs, so kube-scheduler's own fit check passes,
// but their labels show at most 4 usable (used or unhealthy GPUs). A 6-GPU pod stays Pending and the
// extender's reason reaches the FailedScheduling event.
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
// logs a line naming each malformed node.
func malformedLabels(s *scenarioEnv) {
	bad := map[string]func(l map[string]string){
		"nvl-short": func(l map[string]string) { l[key("nvl")] = l[key("nvl")][1:] },
		"pci-char":  func(l map[string]string) { l[key("pci")] = "X" + l[key("pci")][1:] },
		"n-wrong":   func(l map[string]string) { l[key("n")] = "9" },
		"used-long": func(l map[string]string) { l[key("used")] += "0" },
	}
	var specs []nodeSpec
	for name, mutate := range bad {
		specs = append(specs, nodeSpec{name: name, capture: dgx1V, mutate: mutate})
	}
	s.createNodes(append(specs, nodeSpec{name: "good", capture: dgx1V})...)
	pod := s.newPod("gpu2", "nvidia.com/gpu", 2)
	s.createPod(pod)
	s.expectBoundTo(pod.Name, s.name+"-good")

	for name := range bad {
		node := s.name + "-" + name
		if !anyLineContains(s.mode.extender.Grep(node), logMalformedLabels) {
			s.t.Errorf("extender log has no line naming %s and containing %q", node, logMalformedLabels)
		}
	}
	if exited(s.mode.extender) {
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
	names := make(chan string, n)
	for i := range n {
		name := fmt.Sprintf("p%02d", i)
		names <- name
		s.pods = append(s.pods, s.name+"-"+name)
	}
	close(names)
	var wg sync.WaitGroup
	errs := make(chan error, n)
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
	for err := range errs {
		s.t.Error(err)
	}
	if s.t.Failed() {
		s.t.FailNow()
	}
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
