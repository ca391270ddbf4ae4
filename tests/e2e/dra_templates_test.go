package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// The claim-shaping templates (docs/dra.md, "Claim shaping") against the real kube-scheduler
// v1.37.2: the extender's own `claim-template` command writes them, the test creates its output
// unchanged (name, namespace and DeviceClass set by flags), and kube-scheduler allocates the
// template claims on NVIDIA-shaped slices whose attributes and device orders make each
// firstAvailable tier the one DRA takes on some node.

// l40sX4 is a 4-GPU capture: AWS g6e.12xlarge, 4x L40S, every pair NODE (one NUMA node, each GPU
// under a PCIe host bridge of its own).
const l40sX4 = "g6e-l40sx4-node.topo"

// tierGPU is one GPU as the slice publishes it: its PCIe root, NUMA node and, on a Fabric Manager
// node, its 4-GPU partition (0: no partition attribute).
type tierGPU struct {
	gpu       int
	root      string
	numa      int64
	partition int64
}

// tierNode is a DRA node of the scenario: the capture its labels come from and its slice's GPUs
// in device order.
type tierNode struct {
	name    string
	capture string
	gpus    int
	model   string
	product string
	order   []tierGPU
}

// tierOrder lists GPUs in the given order, each with root(gpu), numa(gpu) and partition(gpu).
func tierOrder(order []int, root func(int) string, numa func(int) int64, partition func(int) int64) []tierGPU {
	out := make([]tierGPU, 0, len(order))
	for _, gpu := range order {
		out = append(out, tierGPU{gpu: gpu, root: root(gpu), numa: numa(gpu), partition: partition(gpu)})
	}
	return out
}

func noPartition(int) int64 { return 0 }

// hgxNUMA is the HGX A100 capture's NUMA node per GPU (pairs on NUMA nodes 3, 1, 7, 5), and
// hgxRoot its PCIe root per GPU (one per pair, behind the pair's PCIe switch).
func hgxNUMA(gpu int) int64  { return []int64{3, 3, 1, 1, 7, 7, 5, 5}[gpu] }
func hgxRoot(gpu int) string { return fmt.Sprintf("pci0000:%02x", 0x10*(gpu/2)) }

// The fixture, for 4-GPU claims from `claim-template --gpus 4` (tiers same-pcie-root,
// same-numa-node, any) and `--gpus 4 --nvswitch-partition` (nvswitch-partition first):
//
//   - pcie-root: 8 PCIe T4s, PIX pairs and PHB quads, one PCIe root and NUMA node per quad (GPUs
//     0-3, 4-7). Order 5 0 4 1 7 2 6 3: same-pcie-root takes 5, skips 0 (other root), takes 4,
//     skips 1, takes 7, skips 2, takes 6: {4,5,6,7}, a quad joined through its host bridge (PHB).
//   - l40s-numa: 4x L40S, a root per GPU, all on NUMA node 0. No two GPUs share a root, so
//     same-numa-node takes all four in order 2 0 3 1: a quad joined only through the host (NODE).
//   - hgx-any: HGX A100, a root per pair, pairs on NUMA nodes 3, 1, 7, 5: no root or NUMA node holds
//     four GPUs, so `any` takes the first four of 6 1 7 0 3 4 2 5: {0,1,6,7}, all NVSwitch (NV12).
//   - hgx-partition: HGX A100 like hgx-any with Fabric Manager partitions of four ({0-3} id 1,
//     {4-7} id 2), order 0 4 1 5 2 6 3 7: nvswitch-partition takes 0, skips 4, takes 1, skips 5,
//     takes 2, skips 6, takes 3: partition 1. A plain 2-GPU claim takes 0 and 4 (the first two);
//     then each partition has three free GPUs and the template gets nothing (its later tiers select
//     no partitioned GPU).
//
// Placement: on pcie-root, l40s-numa and hgx-any a tiered claim gets a PHB quad on one NUMA node,
// a NODE quad and an NVLink (NV12) quad across two NUMA nodes. The extender ranks link class first
// and prefers hgx-any although its tier (`any`) is the last, while DRA's own score (8 - tier index,
// weight 2) pulls towards pcie-root: the pull of docs/dra.md's "PCIe locality is not NVLink". A
// GPU-blind extender leaves the choice to that score and the pod on pcie-root.
func claimTemplateFixture() []tierNode {
	socket := func(gpu int) string { return fmt.Sprintf("pci0000:%02x", 0x80*(gpu/4)) }
	socketNUMA := func(gpu int) int64 { return int64(gpu / 4) }
	ownRoot := func(gpu int) string { return fmt.Sprintf("pci0000:%02x", 0x20*gpu) }
	numa0 := func(int) int64 { return 0 }
	partition := func(gpu int) int64 { return int64(1 + gpu/4) }
	return []tierNode{
		{name: "pcie-root", capture: pciePHB, gpus: 8, product: "Tesla T4",
			order: tierOrder([]int{5, 0, 4, 1, 7, 2, 6, 3}, socket, socketNUMA, noPartition)},
		{name: "l40s-numa", capture: l40sX4, gpus: 4, model: "NVIDIA-L40S", product: "NVIDIA L40S",
			order: tierOrder([]int{2, 0, 3, 1}, ownRoot, numa0, noPartition)},
		{name: "hgx-any", capture: hgxA100, gpus: 8, product: "NVIDIA A100-SXM4-80GB",
			order: tierOrder([]int{6, 1, 7, 0, 3, 4, 2, 5}, hgxRoot, hgxNUMA, noPartition)},
		{name: "hgx-partition", capture: hgxA100, gpus: 8, product: "NVIDIA A100-SXM4-80GB",
			order: tierOrder([]int{0, 4, 1, 5, 2, 6, 3, 7}, hgxRoot, hgxNUMA, partition)},
	}
}

// claimTemplateTiers: the templates' tiers as kube-scheduler takes them, node by node (see
// claimTemplateFixture), each allocation compared with the extender's prediction, and the
// extender's placement of a tiered claim against DRA's own tier score. Skipped without the
// extender's cluster cache (the control mode too), so no blind odds apply.
func claimTemplateTiers(s *scenarioEnv) {
	if !s.mode.watchesCluster() {
		s.t.Skip("needs the extender's cluster cache with --dra (cache and chart-identity modes)")
	}
	class := s.name + "-gpu"
	s.createDeviceClass(class)
	fixture := claimTemplateFixture()
	var specs []nodeSpec
	for _, n := range fixture {
		spec := draNodeOf(n.name, n.capture, n.gpus)
		spec.state.Model = n.model
		specs = append(specs, spec)
	}
	s.createNodes(specs...)
	for _, n := range fixture {
		s.publishTierSlice(s.name+"-"+n.name, n.product, n.order)
	}
	s.waitDraCaughtUp(len(fixture))
	node := func(name string) string { return s.name + "-" + name }
	var nodes []string
	for _, n := range fixture {
		nodes = append(nodes, node(n.name))
	}
	tiers := s.createGeneratedTemplate("tiers", class, "--gpus", "4")
	partitioned := s.createGeneratedTemplate("partition", class, "--gpus", "4", "--nvswitch-partition")
	const binds = "gpu_topology_extender_dra_bind_predictions_total"
	matchBefore := s.scrapeValue(binds, map[string]string{"result": "match"})
	unknownBefore := s.scrapeValue(binds, map[string]string{"result": "unknown"})
	mismatchBefore := s.scrapeValue(binds, map[string]string{"result": "mismatch"})

	// Placement: the tiered claim on any node but the partitioned one.
	pod := s.newClaimPod("placed", "", tiers)
	pod.Spec.Affinity = hostnameAffinity(corev1.NodeSelectorOpNotIn, node("hgx-partition"))
	claim, explained := s.scheduleTemplatePod(pod, tiers, nodes[:3])
	preferred := explained.preferredNode()
	if preferred != node("hgx-any") {
		s.t.Errorf("the extender prefers %q (scores %s), want %s: its NVLink quad beats a PHB quad and a NODE quad",
			preferred, explained.scores(), node("hgx-any"))
	}
	s.expectBoundTo(pod.Name, preferred)
	s.expectTier(claim, node("hgx-any"), "gpus/any", []int{6, 1, 7, 0}, explained)
	placed := explained

	// Each remaining tier on its node; the placement's explain, made with these nodes free,
	// predicted the same sets. The partition template on a node without partitions: its
	// partition tier finds no attribute and its later tiers select every GPU, so it takes what the
	// plain template would.
	for _, c := range []struct {
		name, template, node, request string
		gpus                          []int
	}{
		{"root", partitioned, "pcie-root", "gpus/same-pcie-root", []int{5, 4, 7, 6}},
		{"numa", tiers, "l40s-numa", "gpus/same-numa-node", []int{2, 0, 3, 1}},
	} {
		pod := s.newClaimPod(c.name, "", c.template)
		pod.Spec.Affinity = hostnameAffinity(corev1.NodeSelectorOpIn, node(c.node))
		claim, explained := s.scheduleTemplatePod(pod, c.template, nodes)
		s.expectBoundTo(pod.Name, node(c.node))
		s.expectTier(claim, node(c.node), c.request, c.gpus, explained)
		s.expectSamePrediction(placed, explained, node(c.node))
	}

	// The partition template: a whole partition on the free partitioned node.
	pod = s.newClaimPod("partition-whole", "", partitioned)
	pod.Spec.Affinity = hostnameAffinity(corev1.NodeSelectorOpIn, node("hgx-partition"))
	claim, explained = s.scheduleTemplatePod(pod, partitioned, nodes)
	s.expectBoundTo(pod.Name, node("hgx-partition"))
	s.expectTier(claim, node("hgx-partition"), "gpus/nvswitch-partition", []int{0, 1, 2, 3}, explained)
	s.deletePodAndWait(pod.Name)
	s.releaseClaim(claim)
	s.waitExtenderFree(node("hgx-partition"), 8)

	// A plain 2-GPU claim takes GPUs 0 and 4, one of each partition.
	plain := s.createClaim("plain-2", class, 2)
	s.waitClaimsCached()
	plainPod := s.newClaimPod("plain-2", plain, "")
	plainPod.Spec.Affinity = hostnameAffinity(corev1.NodeSelectorOpIn, node("hgx-partition"))
	s.createPod(plainPod)
	s.expectBoundTo(plainPod.Name, node("hgx-partition"))
	s.expectAllocated(plain, node("hgx-partition"), []string{draDevice(0), draDevice(4)})
	s.waitExtenderFree(node("hgx-partition"), 6)

	// Six GPUs free, three in each partition: the partition template gets nothing there.
	pod = s.newClaimPod("partition-split", "", partitioned)
	pod.Spec.Affinity = hostnameAffinity(corev1.NodeSelectorOpIn, node("hgx-partition"))
	claim, explained = s.scheduleTemplatePod(pod, partitioned, nodes)
	if got := explained.node(node("hgx-partition")); got == nil || got.Dra == nil || got.Dra.Outcome != "noFit" || got.Verdict == "fit" {
		s.t.Errorf("the extender's prediction on %s with one GPU of each partition taken: %s; want outcome noFit and a non-fit verdict",
			node("hgx-partition"), got)
	}
	s.expectNoAllocation(pod.Name, claim, "cannot allocate all claims")

	// Five claim pods were bound through the extender; the prediction at bind never disagreed.
	match := s.scrapeValue(binds, map[string]string{"result": "match"}) - matchBefore
	unknown := s.scrapeValue(binds, map[string]string{"result": "unknown"}) - unknownBefore
	s.t.Logf("bind predictions: match %v, unknown %v", match, unknown)
	if mismatch := s.scrapeValue(binds, map[string]string{"result": "mismatch"}) - mismatchBefore; mismatch != 0 || match+unknown != 5 {
		s.t.Errorf("bind predictions of this scenario: match %v, unknown %v, mismatch %v; want 5 without a mismatch", match, unknown, mismatch)
	}
}

// draDevice is the device name of GPU gpu in the scenario's slices.
func draDevice(gpu int) string { return fmt.Sprintf("gpu-%d", draMinor(gpu)) }

// publishTierSlice publishes the node's GPUs in the given order, with the attributes the NVIDIA
// driver v25.12+ publishes that the tiers read: pcieRoot, numaNode and, with Fabric Manager
// partitioning, partition4 (in the driver's own domain).
func (s *scenarioEnv) publishTierSlice(node, product string, order []tierGPU) {
	s.t.Helper()
	str := func(v string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{StringValue: &v} }
	num := func(v int64) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{IntValue: &v} }
	var devices []resourcev1.Device
	for _, g := range order {
		attrs := map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
			"type":                            str("gpu"),
			"productName":                     str(product),
			"resource.kubernetes.io/pciBusID": str(draBusID(g.gpu)),
			"resource.kubernetes.io/pcieRoot": str(g.root),
			"resource.kubernetes.io/numaNode": num(g.numa),
		}
		if g.partition != 0 {
			attrs["partition4"] = num(g.partition)
		}
		devices = append(devices, resourcev1.Device{Name: draDevice(g.gpu), Attributes: attrs})
	}
	s.publishSlice(node, devices)
}

// createGeneratedTemplate runs the extender binary's `claim-template` with the given flags (plus
// the scenario's name, namespace and DeviceClass, JSON out) and creates what it wrote, untouched
// but for the scenario's label. It returns the template's name.
func (s *scenarioEnv) createGeneratedTemplate(name, class string, flags ...string) string {
	s.t.Helper()
	full := s.name + "-" + name
	args := append([]string{"claim-template", "--name", full, "--namespace", namespace, "--device-class", class, "-o", "json"}, flags...)
	out, err := exec.Command(cfg.extender, args...).Output()
	if err != nil {
		s.t.Fatalf("%s %s: %v", cfg.extender, strings.Join(args, " "), err)
	}
	var tmpl resourcev1.ResourceClaimTemplate
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&tmpl); err != nil {
		s.t.Fatalf("claim-template %s wrote what is no ResourceClaimTemplate: %v\n%s", strings.Join(flags, " "), err, out)
	}
	if tmpl.Labels == nil {
		tmpl.Labels = map[string]string{}
	}
	tmpl.Labels[scenarioLabel] = s.name
	ctx, cancel := apiContext()
	defer cancel()
	if _, err := client.ResourceV1().ResourceClaimTemplates(namespace).Create(ctx, &tmpl, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create the generated template %s: %v\n%s", full, err, out)
	}
	return full
}

// hostnameAffinity requires (In) or forbids (NotIn) one node.
func hostnameAffinity(op corev1.NodeSelectorOperator, node string) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: op, Values: []string{node}}},
		}}},
	}}
}

// scheduleTemplatePod creates the template pod and its claim (kube-controller-manager's part),
// asks the extender to explain the pod on the nodes as kube-scheduler will send it (the claim
// recorded in its status, unallocated), and only then records the claim in the pod's status, so
// the prediction is made before kube-scheduler allocates. Returns the claim and the explanation.
func (s *scenarioEnv) scheduleTemplatePod(pod *corev1.Pod, template string, nodes []string) (string, explainAnswer) {
	s.t.Helper()
	s.createPod(pod)
	created, claim := s.createTemplateClaim(pod.Name, template)
	sent := created.DeepCopy()
	sent.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpus", ResourceClaimName: &claim}}
	body, err := json.Marshal(extenderv1.ExtenderArgs{Pod: sent, NodeNames: &nodes})
	if err != nil {
		s.t.Fatalf("encode ExtenderArgs: %v", err)
	}
	ctx, cancel := apiContext()
	defer cancel()
	answer, err := s.extenderCall(ctx, http.MethodPost, "/explain", bytes.NewReader(body))
	if err != nil {
		s.t.Fatalf("explain pod %s: %v", pod.Name, err)
	}
	var explained explainAnswer
	if err := json.Unmarshal(answer, &explained); err != nil {
		s.t.Fatalf("explain pod %s: %v\n%s", pod.Name, err, answer)
	}
	if d := explained.Pod.Demand; d == nil || d.Dra == nil || d.Dra.PassThrough != "" {
		s.t.Fatalf("explain pod %s: the extender does not read the template's claim (pod: %s)", pod.Name, answer)
	}
	s.recordTemplateClaim(created, claim)
	return claim, explained
}

// explainAnswer is the part of POST {prefix}/explain this scenario reads (docs/api.md).
type explainAnswer struct {
	Pod struct {
		Demand *struct {
			Dra *struct {
				PassThrough string `json:"passThrough"`
			} `json:"dra"`
		} `json:"demand"`
	} `json:"pod"`
	Nodes []explainedNode `json:"nodes"`
}

type explainedNode struct {
	Name        string `json:"name"`
	Verdict     string `json:"verdict"`
	Reason      string `json:"reason"`
	WireScore   int    `json:"wireScore"`
	WeakestLink string `json:"weakestLink"`
	Dra         *struct {
		Outcome string `json:"outcome"`
		Why     string `json:"why"`
		Devices []struct {
			Request string `json:"request"`
			Pool    string `json:"pool"`
			Device  string `json:"device"`
		} `json:"devices"`
	} `json:"dra"`
}

func (n *explainedNode) String() string {
	if n == nil {
		return "not explained"
	}
	out := fmt.Sprintf("verdict %s %q, wire score %d, weakest link %s", n.Verdict, n.Reason, n.WireScore, n.WeakestLink)
	if n.Dra == nil {
		return out + ", dra null"
	}
	return out + fmt.Sprintf(", dra %s %q %v", n.Dra.Outcome, n.Dra.Why, n.predicted())
}

// predicted is the predicted allocation as "request:pool/device" in the allocator's order.
func (n *explainedNode) predicted() []string {
	var out []string
	if n != nil && n.Dra != nil {
		for _, d := range n.Dra.Devices {
			out = append(out, d.Request+":"+d.Pool+"/"+d.Device)
		}
	}
	return out
}

func (a explainAnswer) node(name string) *explainedNode {
	for i := range a.Nodes {
		if a.Nodes[i].Name == name {
			return &a.Nodes[i]
		}
	}
	return nil
}

// preferredNode is the fit node with the highest wire score ("" when two share it).
func (a explainAnswer) preferredNode() string {
	best, top := "", -1
	for _, n := range a.Nodes {
		switch {
		case n.Verdict != "fit":
		case n.WireScore > top:
			best, top = n.Name, n.WireScore
		case n.WireScore == top:
			best = ""
		}
	}
	return best
}

func (a explainAnswer) scores() string {
	var out []string
	for _, n := range a.Nodes {
		out = append(out, fmt.Sprintf("%s: %s", n.Name, n.String()))
	}
	return strings.Join(out, "; ")
}

// expectTier asserts that kube-scheduler allocated the claim exactly the GPUs (in this order) of
// the node's pool through the subrequest, and that the extender predicted that allocation there.
func (s *scenarioEnv) expectTier(claim, node, request string, gpus []int, explained explainAnswer) {
	s.t.Helper()
	got := s.getClaim(claim)
	var want []string
	for _, gpu := range gpus {
		want = append(want, request+":"+node+"/"+draDevice(gpu))
	}
	var allocated []string
	if got.Status.Allocation != nil {
		for _, r := range got.Status.Allocation.Devices.Results {
			allocated = append(allocated, r.Request+":"+r.Pool+"/"+r.Device)
		}
	}
	if !slices.Equal(allocated, want) {
		s.t.Errorf("claim %s: kube-scheduler allocated %v, want %v (GPUs %v through %s)", claim, allocated, want, gpus, request)
	}
	if predicted := explained.node(node).predicted(); !slices.Equal(predicted, allocated) {
		s.t.Errorf("claim %s on %s: the extender predicted %v, kube-scheduler allocated %v (explain: %s)",
			claim, node, predicted, allocated, explained.node(node))
	}
}

// expectSamePrediction asserts that two explanations predicted the same allocation on the node.
func (s *scenarioEnv) expectSamePrediction(a, b explainAnswer, node string) {
	s.t.Helper()
	if pa, pb := a.node(node).predicted(), b.node(node).predicted(); !slices.Equal(pa, pb) {
		s.t.Errorf("on %s the extender predicted %v for the placed pod (every node free) and %v for the pinned one", node, pa, pb)
	}
}

// expectNoAllocation waits until kube-scheduler reports the pod unschedulable with the message
// (its own plugins', before any extender call), and asserts the pod unbound and the claim
// unallocated.
func (s *scenarioEnv) expectNoAllocation(pod, claim, message string) {
	s.t.Helper()
	last, err := s.waitUnschedulable(pod, func(m string) bool { return strings.Contains(m, message) })
	if err != nil {
		s.t.Fatalf("pod %s: not reported unschedulable with %q within %s (last message %q): %v", pod, message, bindTimeout, last, err)
	}
	if got := s.getClaim(claim); got.Status.Allocation != nil {
		s.t.Errorf("claim %s allocated %+v, want nothing", claim, got.Status.Allocation.Devices.Results)
	}
}
