package e2e

import (
	"context"
	"fmt"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Consumable capacity (resource.k8s.io/v1, the DRAConsumableCapacity gate: beta and on by default
// from v1.36, alpha and off before) against the real kube-scheduler v1.37.2: one GPU device that
// allows multiple allocations and publishes its memory as a capacity is shared by the claims whose
// capacity requests still fit beside the shares already allocated.

// needDRAConsumableCapacity: on a release with the gate off by default the API server drops
// allowMultipleAllocations and the capacity requests, and the device could not be shared.
var needDRAConsumableCapacity = apiNeed{onByDefault: "DRAConsumableCapacity",
	feature: "a device is never shared by capacity requests; the API server drops the fields"}

const (
	// sharedCapacity is the device's memory; each claim asks sharedRequest of it, which the
	// policy (min 10Gi, step 10Gi) keeps as it is: two shares fit, a third does not.
	sharedCapacity = "80Gi"
	sharedRequest  = "30Gi"
	sharedStep     = "10Gi"
)

// draConsumableCapacity: a DRA node (an HGX A100 handing out its GPUs through DRA only) whose
// slice publishes one device, GPU 0, with allowMultipleAllocations and memory 80Gi (requestPolicy:
// default 10Gi, validRange min 10Gi step 10Gi). Three pods, each with its own claim for one device
// of the class with capacity.requests.memory 30Gi, are created at once: kube-scheduler's allocator
// gives two of them a share of the device (60Gi of 80Gi: a shareID each, consumedCapacity memory
// 30Gi) and binds them; the third stays pending (90Gi would exceed 80Gi). The extender predicts
// the shared device: no pod passed through, its bind check counts no mismatch (a match for each
// bound pod, or unknown where the bind beat the claim watch), and its explain of the pending pod
// reads the claim and finds no room on the node. Then one bound pod is deleted and its claim
// released: the pending pod's claim, in a new pod, binds beside the share left, which the extender
// must let through. One node: who binds is kube-scheduler's own allocator's choice, so a blind
// extender passes the placement too (odds 1); what fails without the feature is the extender's
// reading of the claims (a pass-through, the bind check "unknown"), and an extender that counts a
// shared device as a GPU taken keeps the last pod off the node.
func draConsumableCapacity(s *scenarioEnv) {
	if !s.mode.watchesCluster() {
		s.t.Skip("needs the extender's cluster cache with --dra (cache and chart-identity modes)")
	}
	class := s.name + "-gpu"
	s.createDeviceClass(class)
	s.createNodes(draNodeOf("shared", hgxA100, 8))
	node := s.name + "-shared"
	s.publishSharedGPU(node)
	s.waitDraCaughtUp(1)
	device := draDevice(0)

	var claims []string
	for i := range 3 {
		claims = append(claims, s.createCapacityClaim(fmt.Sprintf("claim-%d", i), class, sharedRequest))
	}
	s.waitClaimsCached()

	const binds = "gpu_topology_extender_dra_bind_predictions_total"
	const passed = "gpu_topology_extender_dra_passthrough_total"
	before := s.bindChecks(binds)
	passedBefore := s.scrapeValue(passed, nil)

	claimOf := map[string]string{} // pod -> its claim
	var pods []string
	for i, claim := range claims {
		pod := s.newClaimPod(fmt.Sprintf("pod-%d", i), claim, "")
		pod.Spec.Affinity = hostnameAffinity(corev1.NodeSelectorOpIn, node)
		s.createPod(pod)
		claimOf[pod.Name] = claim
		pods = append(pods, pod.Name)
	}

	bound, pending := s.waitTwoBoundOnePending(pods, node)
	shares := map[string]string{}
	for _, pod := range bound {
		shares[s.expectShare(claimOf[pod], node, device, sharedRequest)] = pod
	}
	if len(shares) != 2 {
		s.t.Errorf("the two bound claims carry shareIDs %v, want two different ones", shares)
	}
	if got := s.getClaim(claimOf[pending]); got.Status.Allocation != nil {
		s.t.Errorf("claim %s of pending pod %s allocated %+v, want nothing", claimOf[pending], pending,
			got.Status.Allocation.Devices.Results)
	}

	// At each of the two binds kube-scheduler's allocation was compared with the extender's
	// prediction for the node as the pod found it (its own share given back, the other's kept):
	// the shared device. A bind that arrives before the claim watch delivers the allocation counts
	// "unknown" (kube-scheduler writes it in PreBind, just before it calls the extender's bind),
	// as in dra_test.go; a "mismatch" means the prediction was wrong. No filter call passed a pod
	// through (the claims were cached before the pods were created): an extender that cannot read
	// the claims' capacity requests passes them through, and its bind check counts "unknown".
	checks := s.bindChecks(binds)
	s.t.Logf("bind predictions of the two binds: %s", checks.minus(before))
	s.expectChecked(checks.minus(before), 2)
	if n := s.scrapeValue(passed, nil) - passedBefore; n != 0 {
		s.t.Errorf("%v filter calls passed a pod through uninterpreted", n)
	}
	s.expectExplainNoRoom(pending, node)

	// One share released: 30Gi in use, and the pending pod's claim fits beside the share left.
	// kube-scheduler would retry the pending pod on the claim's events, which may reach it before
	// the extender's cache has seen them (a rejected retry then waits for the next event), so the
	// pending pod goes first, and a new pod of its claim comes once the extender has seen the
	// release. The extender then judges a claim beside an allocated share, which the burst never
	// asked it (every filter call came before the first allocation reached its cache, and
	// kube-scheduler refused the third pod itself).
	s.deletePod(pending)
	s.waitPodGone(pending)
	gone := bound[0]
	s.deletePodAndWait(gone)
	s.releaseClaim(claimOf[gone]) // as kube-controller-manager does once the claim's pods are gone
	s.waitClaimsCached()
	late := s.newClaimPod("late", claimOf[pending], "")
	late.Spec.Affinity = hostnameAffinity(corev1.NodeSelectorOpIn, node)
	s.createPod(late)
	s.expectBoundExplained(late.Name, node)
	if shares[s.expectShare(claimOf[pending], node, device, sharedRequest)] != "" {
		s.t.Errorf("claim %s got the shareID of another claim", claimOf[pending])
	}
	third := s.bindChecks(binds).minus(checks)
	s.t.Logf("bind prediction of the third bind: %s", third)
	s.expectChecked(third, 1)
	if n := s.scrapeValue(passed, nil) - passedBefore; n != 0 {
		s.t.Errorf("%v filter calls passed a pod through uninterpreted", n)
	}
}

// bindCheckCounts are the extender's bind-prediction counters at one moment, or their rise
// between two.
type bindCheckCounts struct{ match, unknown, mismatch float64 }

func (s *scenarioEnv) bindChecks(name string) bindCheckCounts {
	s.t.Helper()
	return bindCheckCounts{
		match:    s.scrapeValue(name, map[string]string{"result": "match"}),
		unknown:  s.scrapeValue(name, map[string]string{"result": "unknown"}),
		mismatch: s.scrapeValue(name, map[string]string{"result": "mismatch"}),
	}
}

func (c bindCheckCounts) minus(o bindCheckCounts) bindCheckCounts {
	return bindCheckCounts{c.match - o.match, c.unknown - o.unknown, c.mismatch - o.mismatch}
}

func (c bindCheckCounts) String() string {
	return fmt.Sprintf("match %v, unknown %v, mismatch %v", c.match, c.unknown, c.mismatch)
}

// expectChecked asserts that the rise counts n checked binds, none a mismatch.
func (s *scenarioEnv) expectChecked(rise bindCheckCounts, n float64) {
	s.t.Helper()
	if rise.mismatch != 0 || rise.match+rise.unknown != n {
		s.t.Errorf("bind predictions: %s; want %v without a mismatch", rise, n)
	}
}

// publishSharedGPU publishes node's slice with one device, GPU 0, that allows multiple
// allocations and has sharedCapacity of memory, consumed in steps of sharedStep.
func (s *scenarioEnv) publishSharedGPU(node string) {
	s.t.Helper()
	str := func(v string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{StringValue: &v} }
	step := resource.MustParse(sharedStep)
	yes := true
	devices := []resourcev1.Device{{
		Name: draDevice(0),
		Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"type":                            str("gpu"),
			"productName":                     str("NVIDIA A100-SXM4-80GB"),
			"resource.kubernetes.io/pciBusID": str(draBusID(0)),
			"resource.kubernetes.io/pcieRoot": str(hgxRoot(0)),
		},
		AllowMultipleAllocations: &yes,
		Capacity: map[resourcev1.QualifiedName]resourcev1.DeviceCapacity{
			"memory": {
				Value: resource.MustParse(sharedCapacity),
				RequestPolicy: &resourcev1.CapacityRequestPolicy{
					Default:    &step,
					ValidRange: &resourcev1.CapacityRequestPolicyRange{Min: &step, Step: &step},
				},
			},
		},
	}}
	s.publishSlice(node, devices)
	// Where the API server does not know the fields it drops them: the device is then a plain one,
	// taken whole by the first claim, which this scenario does not assert.
	ctx, cancel := apiContext()
	defer cancel()
	got, err := client.ResourceV1().ResourceSlices().Get(ctx, node+"-"+draDriver, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("read back the slice of %s: %v", node, err)
	}
	d := got.Spec.Devices[0]
	if d.AllowMultipleAllocations == nil || !*d.AllowMultipleAllocations || d.Capacity["memory"].RequestPolicy == nil {
		s.t.Fatalf("the API server dropped the shareable device's fields (DRAConsumableCapacity off?): %+v", d)
	}
}

// createCapacityClaim creates a ResourceClaim for one device of the class with
// capacity.requests.memory = memory and returns its name.
func (s *scenarioEnv) createCapacityClaim(name, class, memory string) string {
	s.t.Helper()
	spec := s.claimSpec(class, 1)
	spec.Devices.Requests[0].Exactly.Capacity = &resourcev1.CapacityRequirements{
		Requests: map[resourcev1.QualifiedName]resource.Quantity{"memory": resource.MustParse(memory)},
	}
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: s.name + "-" + name, Namespace: namespace, Labels: map[string]string{scenarioLabel: s.name}},
		Spec:       spec,
	}
	ctx, cancel := apiContext()
	defer cancel()
	created, err := client.ResourceV1().ResourceClaims(namespace).Create(ctx, claim, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatalf("create ResourceClaim %s: %v", claim.Name, err)
	}
	if c := created.Spec.Devices.Requests[0].Exactly.Capacity; c == nil || len(c.Requests) == 0 {
		s.t.Fatalf("the API server dropped claim %s's capacity requests (DRAConsumableCapacity off?)", claim.Name)
	}
	return claim.Name
}

// waitTwoBoundOnePending waits until two of the three pods are bound to node and kube-scheduler
// has reported the third unschedulable; it returns the bound pods and the pending one, after
// checking that the third is still unbound.
func (s *scenarioEnv) waitTwoBoundOnePending(pods []string, node string) (bound []string, pending string) {
	s.t.Helper()
	var last string
	err := s.poll(bindTimeout, func(ctx context.Context) (bool, error) {
		bound, pending = nil, ""
		var unbound []*corev1.Pod
		for _, name := range pods {
			p, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if p.Spec.NodeName == "" {
				unbound = append(unbound, p)
				continue
			}
			if p.Spec.NodeName != node {
				return false, fmt.Errorf("pod %s bound to %s, want %s", name, p.Spec.NodeName, node)
			}
			bound = append(bound, name)
		}
		last = fmt.Sprintf("bound %v, %d unbound", bound, len(unbound))
		if len(bound) > 2 {
			return false, fmt.Errorf("all three pods bound: the device was shared beyond its %s", sharedCapacity)
		}
		if len(bound) != 2 || len(unbound) != 1 {
			return false, nil
		}
		for _, c := range unbound[0].Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
				pending = unbound[0].Name
				last += fmt.Sprintf("; %s: %s", pending, c.Message)
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		s.t.Fatalf("want two pods bound to %s and one reported unschedulable within %s (last: %s): %v", node, bindTimeout, last, err)
	}
	s.t.Logf("%s", last)
	if got := s.getPod(pending); got.Spec.NodeName != "" {
		s.t.Fatalf("pod %s was bound to %s after being reported unschedulable", pending, got.Spec.NodeName)
	}
	return bound, pending
}

// expectBoundExplained is expectBoundTo, and when the pod is not bound in time it says what the
// extender's explain makes of it on node.
func (s *scenarioEnv) expectBoundExplained(pod, node string) {
	s.t.Helper()
	got, err := s.pollBound(pod)
	if err != nil {
		var view explainAnswer
		ctx, cancel := apiContext()
		defer cancel()
		explained := "explain failed"
		if err := s.getExtenderJSON(ctx, "/explain?pod="+url.QueryEscape(namespace+"/"+pod), &view); err == nil {
			explained = view.node(node).String()
		}
		s.t.Fatalf("pod %s not bound within %s (the extender's explain on %s: %s): %v", pod, bindTimeout, node, explained, err)
	}
	if got != node {
		s.t.Errorf("pod %s bound to %s, want %s", pod, got, node)
	}
}

// expectShare asserts that the claim is allocated a share of node's device: one result, with a
// shareID and consumedCapacity memory = memory. It returns the shareID.
func (s *scenarioEnv) expectShare(claim, node, device, memory string) string {
	s.t.Helper()
	got := s.getClaim(claim)
	if got.Status.Allocation == nil || len(got.Status.Allocation.Devices.Results) != 1 {
		s.t.Errorf("claim %s: allocation %+v, want one share of %s/%s", claim, got.Status.Allocation, node, device)
		return ""
	}
	r := got.Status.Allocation.Devices.Results[0]
	if r.Driver != draDriver || r.Pool != node || r.Device != device {
		s.t.Errorf("claim %s allocated %s/%s/%s, want %s/%s/%s", claim, r.Driver, r.Pool, r.Device, draDriver, node, device)
	}
	share := ""
	if r.ShareID != nil {
		share = string(*r.ShareID)
	}
	if share == "" {
		s.t.Errorf("claim %s: the allocation of %s carries no shareID", claim, r.Device)
	}
	want := resource.MustParse(memory)
	if q, ok := r.ConsumedCapacity["memory"]; !ok || q.Cmp(want) != 0 {
		s.t.Errorf("claim %s: consumedCapacity %v, want memory %s", claim, r.ConsumedCapacity, memory)
	}
	return share
}

// expectExplainNoRoom waits until the extender's explain of the pending pod reads its claim (no
// pass-through) and judges node unable to hold it: not fit, DRA outcome noFit. The cache follows
// the claim watch, so the bound claims' shares may arrive a moment after their pods are bound.
func (s *scenarioEnv) expectExplainNoRoom(pod, node string) {
	s.t.Helper()
	var last string
	err := s.poll(seenTimeout, func(ctx context.Context) (bool, error) {
		var view explainAnswer
		if err := s.getExtenderJSON(ctx, "/explain?pod="+url.QueryEscape(namespace+"/"+pod), &view); err != nil {
			last = err.Error()
			return false, nil
		}
		d := view.Pod.Demand
		if d == nil || d.Dra == nil || d.Dra.PassThrough != "" {
			last = fmt.Sprintf("the pod's DRA demand is not read: %+v", d)
			return false, nil
		}
		n := view.node(node)
		last = n.String()
		return n != nil && n.Verdict != "fit" && n.Dra != nil && n.Dra.Outcome == "noFit", nil
	})
	if err != nil {
		s.t.Errorf("explain %s on %s: %s; want a non-fit verdict with DRA outcome noFit", pod, node, last)
		return
	}
	s.t.Logf("explain %s on %s: %s", pod, node, last)
}
