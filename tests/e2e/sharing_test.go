package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpu-topology-extender/tests/e2e/internal/topo"
)

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

// sharingLastReplica: a time-sliced DGX-1V whose agent reports 31 of its 32 replicas held
// (labels-v1 tenants 44444443) and two pods that accept shared GPUs, created at once and pinned to
// it. kube-scheduler's own fit sees 32 allocatable nvidia.com/gpu and no pod, so alone it binds
// both; the extender counts the agent's tenants and the replica it reserves for the first bind,
// binds one (recording gputopo.dev/gpus: replicas:1) and keeps the other Pending with its reason
// (docs/sharing.md#replicas-counted). A blind extender binds both.
func sharingLastReplica(s *scenarioEnv) {
	if !s.mode.mode.cache {
		s.t.Skip("nodes mode: the extender decides from the node's labels alone, and they change " +
			"only at the agent's next pass; kube-scheduler's binder does not ask it")
	}
	s.createNodes(nodeSpec{name: "sliced", capture: dgx1V, gpus: 32, mutate: func(labels map[string]string) {
		labels["nvidia.com/gpu.sharing-strategy"] = "time-slicing"
		labels["nvidia.com/gpu.replicas"] = "4"
		labels[key("tenants")] = "44444443"
	}})
	node := s.name + "-sliced"
	names := s.createPinnedServices(node, "nvidia.com/gpu", 2)
	var bound, pending string
	err := s.poll(bindTimeout, func(ctx context.Context) (bool, error) {
		for i, name := range names {
			p, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if p.Spec.NodeName != "" {
				bound, pending = name, names[1-i]
				if got := p.Annotations[key("gpus")]; got != "replicas:1" {
					return false, fmt.Errorf("pod %s bound with %s=%q, want \"replicas:1\"", name, key("gpus"), got)
				}
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		s.t.Fatalf("no pod took the last replica of %s within %s as the extender binds it: %v", node,
			bindTimeout, err)
	}
	s.t.Logf("%s took the last replica", bound)
	s.expectUnschedulable(pending, reasonNoFreeReplica)
}

// sharingMigReplicas: an A100 whose GPU 0 holds one 1g.10gb MIG device the device plugin
// time-slices 4 ways, 2 of its replicas held (labels-v1 state `2`), and three pods asking for one
// replica each, created at once and pinned to it. kube-scheduler's own fit sees 4 allocatable
// nvidia.com/mig-1g.10gb and no pod, so alone it binds all three; the extender counts the device's
// free replicas and the one it reserves per bind (docs/sharing.md#mig-devices-shared): it binds two
// and keeps the third Pending with its MIG reason. An extender that counts devices, not replicas,
// binds one; a blind one binds three.
func sharingMigReplicas(s *scenarioEnv) {
	if !s.mode.mode.cache {
		s.t.Skip("nodes mode: the extender decides from the node's labels alone, and they change " +
			"only at the agent's next pass; kube-scheduler's binder does not ask it")
	}
	s.createNodes(nodeSpec{
		name: "mig", capture: hgxA100, gpus: 7,
		extra: map[string]int64{"nvidia.com/mig-1g.10gb": 4},
		state: topo.State{Used: "m1111111", MIG: "10000000", MIGGIs: map[int]string{0: "002"}},
		mutate: func(labels map[string]string) {
			labels["nvidia.com/mig-1g.10gb.sharing-strategy"] = "time-slicing"
			labels["nvidia.com/mig-1g.10gb.replicas"] = "4"
		},
	})
	node := s.name + "-mig"
	names := s.createPinnedServices(node, "nvidia.com/mig-1g.10gb", 3)
	boundNow := func(ctx context.Context) ([]string, []string, error) {
		var bound, pending []string
		for _, name := range names {
			p, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, nil, err
			}
			if p.Spec.NodeName != "" {
				bound = append(bound, name)
			} else {
				pending = append(pending, name)
			}
		}
		return bound, pending, nil
	}
	var bound, pending []string
	err := s.poll(bindTimeout, func(ctx context.Context) (bool, error) {
		var err error
		bound, pending, err = boundNow(ctx)
		if len(bound) > 2 {
			return false, fmt.Errorf("pods %v bound: more than the device's 2 free replicas", bound)
		}
		return err == nil && len(bound) == 2, err
	})
	if err != nil {
		s.t.Fatalf("the 2 free replicas of %s's shared MIG device not taken within %s (bound %v): %v",
			node, bindTimeout, bound, err)
	}
	s.t.Logf("%v took the free replicas", bound)
	s.expectUnschedulable(pending[0], reasonMIGPlacement)
}

// sharingAgentConfig: the node agent reads the NVIDIA device plugin's configuration ConfigMap
// (--device-plugin-config), picks the config the node's nvidia.com/device-plugin.config label
// names (time-slicing, 4 replicas, failRequestsGreaterThanOne) and publishes labels-v1 sharing;
// the extender then keeps a pod whose one container asks for 2 replicas Pending with its reason
// (the plugin's Allocate would refuse the container at admission) and binds a pod of two
// one-replica containers. kube-scheduler's own fit sees 32 allocatable nvidia.com/gpu: a blind
// extender binds both.
func sharingAgentConfig(s *scenarioEnv) {
	agent, fakeNVML := agentPaths()
	for _, f := range []string{agent, fakeNVML} {
		if _, err := os.Stat(f); err != nil {
			s.t.Fatalf("%v (build the C++ tree first: cmake --build build)", err)
		}
	}
	configMap := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: s.name + "-device-plugin", Namespace: namespace},
		Data: map[string]string{
			"lenient": "version: v1\nsharing:\n  timeSlicing:\n    resources:\n" +
				"    - name: nvidia.com/gpu\n      replicas: 4\n",
			"strict": "version: v1\nsharing:\n  timeSlicing:\n    failRequestsGreaterThanOne: true\n" +
				"    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n",
		},
	}
	ctx, cancel := apiContext()
	defer cancel()
	if _, err := client.CoreV1().ConfigMaps(namespace).Create(ctx, configMap, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create the device plugin's ConfigMap: %v", err)
	}
	s.t.Cleanup(func() {
		ctx, cancel := apiContext()
		defer cancel()
		client.CoreV1().ConfigMaps(namespace).Delete(ctx, configMap.Name, metav1.DeleteOptions{})
	})
	s.createNodes(nodeSpec{name: "sliced", capture: dgx1V, gpus: 32, mutate: func(labels map[string]string) {
		asFreshGPUNode(labels)
		labels["nvidia.com/gpu.sharing-strategy"] = "time-slicing"
		labels["nvidia.com/gpu.replicas"] = "4"
		labels["nvidia.com/device-plugin.config"] = "strict"
	}})
	node := s.name + "-sliced"
	s.runAgentOnce(agent, fakeNVML, node, "--device-plugin-config", namespace+"/"+configMap.Name)
	s.expectLabels(node, nil, map[string]string{key("sharing"): "time-slicing.4.f", key("n"): "8"})
	if s.mode.watchesCluster() {
		s.waitExtenderSeesGenLabels()
	}

	oneContainer := s.newPod("two-in-one", "nvidia.com/gpu", 2)
	s.createPod(oneContainer)
	s.expectUnschedulable(oneContainer.Name, reasonOneReplicaPerContainer)

	twoContainers := s.newPod("two-containers", "nvidia.com/gpu", 1)
	second := twoContainers.Spec.Containers[0]
	second.Name = "second"
	twoContainers.Spec.Containers = append(twoContainers.Spec.Containers, second)
	s.createPod(twoContainers)
	s.expectBoundTo(twoContainers.Name, node)
}

// sharingAgentTenants: replicas the extender counts between the agent's passes are the ones the
// agent then reports. A fresh time-sliced DGX-1V (4 replicas per GPU) published by the agent with
// no tenant; three pods that accept shared GPUs bind there through the extender (replicas:1
// each), which lays them on the GPUs with the fewest tenants, ties to the lowest index: tenants
// 1,1,1,0,0,0,0,0 in `nodes`. The fake kubelet then reports the three replicas as the device
// plugin might have placed them (GPUs 4, 6, 7: its tie-break is not the extender's to know; GPU 5
// of the fake DGX-1V is failed), the agent publishes tenants 00001011, and `nodes` shows the
// agent's counts: the same multiset, now on the GPUs the replicas hold
// (docs/sharing.md#replicas-counted).
func sharingAgentTenants(s *scenarioEnv) {
	if !s.mode.mode.cache {
		s.t.Skip("nodes mode: no cluster cache, so no pods counted between the agent's passes")
	}
	agent, fakeNVML := agentPaths()
	for _, f := range []string{agent, fakeNVML} {
		if _, err := os.Stat(f); err != nil {
			s.t.Fatalf("%v (build the C++ tree first: cmake --build build)", err)
		}
	}
	s.createNodes(nodeSpec{name: "sliced", capture: dgx1V, gpus: 32, mutate: func(labels map[string]string) {
		asFreshGPUNode(labels)
		labels["nvidia.com/gpu.sharing-strategy"] = "time-slicing"
		labels["nvidia.com/gpu.replicas"] = "4"
	}})
	node := s.name + "-sliced"
	kubelet := &scriptedKubelet{}
	socket := filepath.Join(logDir, s.name+"-kubelet.sock")
	serveKubelet(s, socket, kubelet)
	s.runAgentPass(agent, fakeNVML, node, socket)
	s.expectLabels(node, nil, map[string]string{key("n"): "8", key("used"): "00000000"})
	s.waitExtenderSeesGenLabels()

	names := s.createPinnedServices(node, "nvidia.com/gpu", 3)
	for _, name := range names {
		s.expectBoundTo(name, node)
	}
	predicted := s.waitTenants(node, func(t []int) bool { return sum(t) == 3 })
	if want := []int{1, 1, 1, 0, 0, 0, 0, 0}; !slices.Equal(predicted, want) {
		s.t.Errorf("tenants counted from the binds: %v, want %v", predicted, want)
	}

	// The agent's next pass sees the replicas where the plugin put them; gen (seconds) must be
	// later than the binds for its counts to stand for them.
	time.Sleep(1100 * time.Millisecond)
	kubelet.set(map[string][]string{
		names[0]: {"GPU-dgx1v-4::0"}, names[1]: {"GPU-dgx1v-6::1"}, names[2]: {"GPU-dgx1v-7::3"},
	})
	s.runAgentPass(agent, fakeNVML, node, socket)
	s.expectLabels(node, nil, map[string]string{key("tenants"): "00001011"})
	reported := s.waitTenants(node, func(t []int) bool { return len(t) == 8 && t[7] == 1 })
	if want := []int{0, 0, 0, 0, 1, 0, 1, 1}; !slices.Equal(reported, want) {
		s.t.Errorf("tenants after the agent's pass: %v, want %v", reported, want)
	}
	a, b := slices.Clone(predicted), slices.Clone(reported)
	slices.Sort(a)
	slices.Sort(b)
	if !slices.Equal(a, b) {
		s.t.Errorf("predicted tenants %v and reported %v differ as multisets", predicted, reported)
	}
}

func sum(values []int) int {
	total := 0
	for _, v := range values {
		total += v
	}
	return total
}

// waitTenants polls the extender's `nodes` for the node's sharing.tenants until ok holds, and
// returns them.
func (s *scenarioEnv) waitTenants(node string, ok func([]int) bool) []int {
	s.t.Helper()
	var last []int
	err := s.poll(seenTimeout, func(ctx context.Context) (bool, error) {
		body, err := s.extenderCall(ctx, http.MethodGet, "/nodes?node="+url.QueryEscape(node), nil)
		if err != nil {
			return false, nil
		}
		var view struct {
			Nodes []struct {
				Sharing *struct {
					Tenants []int `json:"tenants"`
				} `json:"sharing"`
			} `json:"nodes"`
		}
		if err := json.Unmarshal(body, &view); err != nil || len(view.Nodes) != 1 || view.Nodes[0].Sharing == nil {
			return false, nil
		}
		last = view.Nodes[0].Sharing.Tenants
		return ok(last), nil
	})
	if err != nil {
		s.t.Fatalf("node %s: tenants never as expected (last %v): %v", node, last, err)
	}
	return last
}

// createPinnedServices creates n pods that ask for one `resource` and accept shared GPUs (svc-0,
// svc-1, ...) pinned to node, and returns their names.
func (s *scenarioEnv) createPinnedServices(node, resource string, n int) []string {
	var names []string
	for i := range n {
		pod := s.newPod(fmt.Sprintf("svc-%d", i), resource, 1)
		pod.Spec.NodeSelector["kubernetes.io/hostname"] = node
		s.createPod(pod)
		names = append(names, pod.Name)
	}
	return names
}
