package e2e

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpu-topology-extender/tests/e2e/internal/promtext"
)

// preemptOnFullNode: a low-priority pod holds all eight GPUs of the only node; a high-priority
// 8-GPU pod then preempts it through the real kube-scheduler: filter refuses the full node as
// "preemption may help", kube-scheduler's dry run proposes the low pod as the victim, the
// extender's preempt verb keeps the candidate (the pod fits the node with the victim gone), the
// victim is deleted and the high pod bound to the node. The e2e API server runs without the
// Priority admission plugin, so the pods carry spec.priority directly.
func preemptOnFullNode(s *scenarioEnv) {
	s.createNodes(nodeSpec{name: "full", capture: dgx1V})
	node := s.name + "-full"
	low, high := int32(10), int32(1000)

	victim := s.newPod("low", "nvidia.com/gpu", 8)
	victim.Spec.Priority = &low
	s.createPod(victim)
	s.expectBoundTo(victim.Name, node)
	s.waitExtenderCaughtUp() // the extender counts the victim's GPUs

	preemptor := s.newPod("high", "nvidia.com/gpu", 8)
	preemptor.Spec.Priority = &high
	s.createPod(preemptor)
	s.expectBoundTo(preemptor.Name, node)

	err := s.poll(seenTimeout, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().Pods(namespace).Get(ctx, victim.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		s.t.Errorf("victim %s still present %s after the preemptor bound: %v", victim.Name, seenTimeout, err)
	}
	if s.mode.extender == nil {
		return
	}
	// kube-scheduler asked the extender about the candidate (and the extender answered).
	ctx, cancel := apiContext()
	defer cancel()
	samples, err := promtext.Scrape(ctx, s.mode.metricsURL)
	if err != nil {
		s.t.Fatalf("extender metrics: %v", err)
	}
	n := samples.Value("gpu_topology_extender_http_requests_total",
		map[string]string{"code": "200", "verb": "preempt"})
	if n < 1 {
		s.t.Errorf("the extender answered no preempt call (%s)", s.mode.metricsURL)
	}
}

// preemptFreesOneQuad: topology-minimal preemption (core/preemption_planner.h). A DGX-1V holds
// eight 1-GPU pods, bound with their GPUs named (`gputopo.dev/gpus`): those on GPUs 0, 1, 4 and 5
// at priority 1, on 2 and 3 at priority 2, on 6 and 7 at priority 3. A 4-GPU pod of priority 1000
// asking for an NVLink quad arrives. kube-scheduler's dry run, by GPU counts, proposes the four
// least important pods, on GPUs 0, 1, 4, 5: no quad. The extender answers the pods on the quad
// {0,1,2,3} instead (the lowest priorities that free one), so exactly those four are evicted and
// the preemptor binds; the pods on 4-7 keep running. With the scheduler's victims the pod would not
// fit: a blind extender passing them through fails.
func preemptFreesOneQuad(s *scenarioEnv) {
	if !s.mode.mode.cache {
		s.t.Skip("no cluster cache: the extender cannot see the node's other pods")
	}
	s.createNodes(nodeSpec{name: "dgx", capture: dgx1V})
	node := s.name + "-dgx"
	priorities := []int32{1, 1, 2, 2, 1, 1, 3, 3}
	var held []string
	for gpu, p := range priorities {
		pod := s.newPod(fmt.Sprintf("gpu%d", gpu), "nvidia.com/gpu", 1)
		priority := p
		pod.Spec.Priority = &priority
		pod.Spec.NodeName = node
		pod.Annotations = map[string]string{key("gpus"): fmt.Sprint(gpu)}
		s.createPod(pod)
		held = append(held, pod.Name)
	}
	s.waitExtenderCaughtUp()

	high := int32(1000)
	preemptor := s.newPod("quad", "nvidia.com/gpu", 4)
	preemptor.Spec.Priority = &high
	preemptor.Annotations = map[string]string{key("min-link"): "nvlink"}
	s.createPod(preemptor)
	s.expectBoundTo(preemptor.Name, node)

	gone := func(name string) bool {
		ctx, cancel := apiContext()
		defer cancel()
		_, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}
	for gpu, name := range held {
		wantGone := gpu <= 3
		if got := gone(name); got != wantGone {
			s.t.Errorf("pod on GPU %d (priority %d): evicted %v, want %v", gpu, priorities[gpu], got, wantGone)
		}
	}
}
