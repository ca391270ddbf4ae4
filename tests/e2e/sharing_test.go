package e2e

import "fmt"

// sharingExclusive: pods asking for exclusive GPUs (gputopo.dev/isolation: exclusive) go to the one
// DGX-1V whose GPUs are whole, not to any of five whose device plugin time-slices each GPU four
// ways (GPU Feature Discovery's nvidia.com/gpu.sharing-strategy and .replicas labels, 32
// allocatable nvidia.com/gpu): kube-scheduler's own fit passes on all six. Three pods one after the
// other: a blind extender passes with chance (1/6)^3 = 0.46%. Then a pod pinned to a time-sliced
// node stays Pending with the extender's reason (a blind extender binds it), and a pod that accepts
// shared GPUs, pinned there too, binds (docs/sharing.md).
const sharingExclusiveOdds = 1.0 / (6 * 6 * 6)

func sharingExclusive(s *scenarioEnv) {
	sliced := func(labels map[string]string) {
		labels["nvidia.com/gpu.sharing-strategy"] = "time-slicing"
		labels["nvidia.com/gpu.replicas"] = "4"
	}
	var specs []nodeSpec
	for _, name := range []string{"sliced-a", "sliced-b", "sliced-c", "sliced-d", "sliced-e"} {
		specs = append(specs, nodeSpec{name: name, capture: dgx1V, gpus: 32, mutate: sliced})
	}
	s.createNodes(append(specs, nodeSpec{name: "whole", capture: dgx1V})...)

	exclusive := func(name string) string {
		pod := s.newPod(name, "nvidia.com/gpu", 1)
		pod.Annotations = map[string]string{key("isolation"): "exclusive"}
		s.createPod(pod)
		return pod.Name
	}
	for i := range 3 {
		name := exclusive(fmt.Sprintf("exclusive-%d", i))
		s.expectBoundTo(name, s.name+"-whole")
		s.deletePodAndWait(name)
	}

	pinned := s.newPod("exclusive-pinned", "nvidia.com/gpu", 1)
	pinned.Annotations = map[string]string{key("isolation"): "exclusive"}
	pinned.Spec.NodeSelector["kubernetes.io/hostname"] = s.name + "-sliced-a"
	s.createPod(pinned)
	s.expectUnschedulable(pinned.Name, reasonGPUsShared)

	shared := s.newPod("shared-pinned", "nvidia.com/gpu", 1)
	shared.Spec.NodeSelector["kubernetes.io/hostname"] = s.name + "-sliced-a"
	s.createPod(shared)
	s.expectBoundTo(shared.Name, s.name+"-sliced-a")
}
