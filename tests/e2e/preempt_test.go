package e2e

import (
	"context"

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
