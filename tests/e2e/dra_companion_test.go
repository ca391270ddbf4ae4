package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpu-topology-extender/tests/e2e/internal/cluster"
)

// NVLink islands through companion devices (docs/dra.md, "NVLink islands"): the node agent
// publishes, besides the labels, one ResourceSlice of companion devices (one per GPU: its PCI bus
// id and NVLink island) under its own driver, with skipNodeOperations; a claim written by
// `claim-template --nvlink-island` then gets GPUs of one island from the real kube-scheduler. The
// API server runs with DRAOptionalNodeOperations (cluster.APIServerOnlyFeatureGates); the
// scenario's own kube-scheduler turns it on too (it then uses the experimental allocator), and
// the node declares the feature in its status, as a kubelet with the gate does.

const (
	// islandSchedulerName is the profile of the scenario's kube-scheduler.
	islandSchedulerName = "gte-island-scheduler"
	// companionDriver is the agent's default --companion-driver.
	companionDriver = "topology.gputopo.dev"
)

// fakeNVMLBusID is GPU i's PCI address on the fake NVML's DGX-1V (tests/agent/fake_nvml), in the
// NVIDIA DRA driver's spelling.
func fakeNVMLBusID(gpu int) string {
	return fmt.Sprintf("0000:%02x:00.0", []int{0x06, 0x07, 0x0a, 0x0b, 0x85, 0x86, 0x89, 0x8a}[gpu])
}

// islandListed is the order of the NVIDIA slice: plain first-fit of two takes GPUs 0 and 6
// (across the sockets, no NVLink); GPUs 0-3 and 4-7 are the cube-mesh's islands.
var islandListed = []int{0, 6, 7, 1, 2, 3, 4, 5}

// draCompanionIsland: on a DGX-1V that hands its GPUs out through DRA, the agent (fake NVML)
// publishes no companion slice while the Node does not declare DRAOptionalNodeOperations, and
// otherwise labels the node and publishes its companion slice (islands {0-3}, {4-7}, skipNodeOperations
// kept); the test publishes an NVIDIA-shaped slice listing GPUs 0 6 7 1 ...; a pod whose claim
// comes from `claim-template --gpus 2 --nvlink-island` is allocated GPUs 0 and 1 (an NVLink pair of
// island 0) with their own companions, where a plain 2-GPU claim would get 0 and 6; the extender's
// explain predicted exactly those devices before scheduling, and its bind check counts a match.
// One node: the outcome is DRA's, not the node choice, so a blind extender passes too (odds 1);
// what fails without the feature is the allocation itself.
func draCompanionIsland(s *scenarioEnv) {
	if !s.mode.watchesCluster() {
		s.t.Skip("needs the extender's cluster cache with --dra (cache and chart-identity modes)")
	}
	agent, fakeNVML := agentPaths()
	for _, f := range []string{agent, fakeNVML} {
		if _, err := os.Stat(f); err != nil {
			s.t.Fatalf("%v (build the C++ tree first: cmake --build build)", err)
		}
	}
	sched := s.startExtraScheduler("island-scheduler", islandSchedulerName, nil,
		cluster.FeatureGates+",DRAOptionalNodeOperations=true")
	defer sched.Stop(10 * time.Second)

	gpuClass := s.name + "-gpu"
	s.createDeviceClass(gpuClass)
	linkClass := s.name + "-links"
	s.createCompanionClass(linkClass)
	node := s.createIslandNode(sched, "island", true)
	companion := node + "-" + companionDriver
	s.t.Cleanup(func() { deleteSlice(companion) })
	// The kubelet-side guard: on a Node that does not declare the feature the agent publishes no
	// companion slice (a kubelet without the gate would wait for a DRA plugin of this driver).
	undeclared := s.createIslandNode(sched, "undeclared", false)
	s.t.Cleanup(func() { deleteSlice(undeclared + "-" + companionDriver) })
	if out := s.runAgentCompanion(agent, fakeNVML, undeclared); !strings.Contains(out, "does not declare DRAOptionalNodeOperations") {
		s.t.Errorf("the agent on a Node without the declared feature did not say why it publishes nothing:\n%s", out)
	}
	ctx, cancel := apiContext()
	if _, err := client.ResourceV1().ResourceSlices().Get(ctx, undeclared+"-"+companionDriver, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		s.t.Errorf("companion slice of %s (no declared feature): %v, want none", undeclared, err)
	}
	cancel()

	if out := s.runAgentCompanion(agent, fakeNVML, node); !strings.Contains(out, "companion slice published") {
		s.t.Fatalf("the agent did not publish its companion slice:\n%s", out)
	}
	s.expectCompanionSlice(companion, node)
	s.createGPUSliceWithBusIDs(node, islandListed, fakeNVMLBusID)
	s.waitDraCaughtUp(2)

	spec := s.islandClaimSpec(gpuClass, linkClass)
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: s.name + "-island", Namespace: namespace, Labels: map[string]string{scenarioLabel: s.name}},
		Spec:       spec,
	}
	ctx, cancel = apiContext()
	if _, err := client.ResourceV1().ResourceClaims(namespace).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		cancel()
		s.t.Fatalf("create ResourceClaim: %v", err)
	}
	cancel()
	s.waitClaimsCached()

	wantGPUs := []string{fmt.Sprintf("gpu-%d", draMinor(0)), fmt.Sprintf("gpu-%d", draMinor(1))}
	wantLinks := []string{"gpu-0", "gpu-1"}

	// The prediction first: a pod no scheduler serves, explained by name while its claim is free.
	probe := s.newClaimPod("probe", claim.Name, "")
	probe.Spec.SchedulerName = "no-such-scheduler"
	s.createPod(probe)
	gpus, links := s.explainDraDevices(probe.Name, node)
	if !slices.Equal(gpus, wantGPUs) || !slices.Equal(links, wantLinks) {
		s.t.Errorf("explain predicts GPU devices %v and companions %v, want %v and %v", gpus, links, wantGPUs, wantLinks)
	}
	// Never scheduled: gone once the API server and the extender's cache say so.
	s.waitExtenderCaughtUp()
	s.deletePod(probe.Name)
	if err := s.poll(seenTimeout, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().Pods(namespace).Get(ctx, probe.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		s.t.Fatalf("pod %s not gone: %v", probe.Name, err)
	}
	s.waitExtenderCaughtUp()

	// The bind-time check compares with the claim as the extender's cache holds it: a bind that
	// arrives before the claim watch delivers the allocation counts "unknown", not "match". The
	// allocation itself is compared with explain's prediction above; here one check and no
	// mismatch.
	checked := func() float64 {
		return s.scrapeValue("gpu_topology_extender_dra_bind_predictions_total", map[string]string{"result": "match"}) +
			s.scrapeValue("gpu_topology_extender_dra_bind_predictions_total", map[string]string{"result": "unknown"})
	}
	checkedBefore := checked()
	pod := s.newClaimPod("island-pod", claim.Name, "")
	pod.Spec.SchedulerName = islandSchedulerName
	s.createPod(pod)
	s.expectBoundTo(pod.Name, node)
	gotGPUs, gotLinks := allocatedByDriver(s, claim.Name, node)
	if !slices.Equal(gotGPUs, wantGPUs) || !slices.Equal(gotLinks, wantLinks) {
		s.t.Errorf("claim allocated GPU devices %v and companions %v, want %v (GPUs 0, 1: island 0) and %v",
			gotGPUs, gotLinks, wantGPUs, wantLinks)
	}
	if got := checked(); got != checkedBefore+1 {
		s.t.Errorf("bind-time DRA checks (match or unknown): %v, want %v", got, checkedBefore+1)
	}
	if mismatch := s.scrapeValue("gpu_topology_extender_dra_bind_predictions_total", map[string]string{"result": "mismatch"}); mismatch != 0 {
		s.t.Errorf("%v bind predictions did not match the allocation", mismatch)
	}
}

// createCompanionClass creates the DeviceClass the chart adds with agent.companionSlice.enabled,
// under this scenario's name; deleteDraObjects (registered by createDeviceClass) does not know it,
// so it is deleted here.
func (s *scenarioEnv) createCompanionClass(name string) {
	s.t.Helper()
	dc := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{scenarioLabel: s.name}},
		Spec: resourcev1.DeviceClassSpec{Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
			Expression: "device.driver == '" + companionDriver + "'",
		}}}},
	}
	ctx, cancel := apiContext()
	defer cancel()
	if _, err := client.ResourceV1().DeviceClasses().Create(ctx, dc, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create DeviceClass %s: %v", name, err)
	}
	s.t.Cleanup(func() {
		ctx, cancel := apiContext()
		defer cancel()
		_ = client.ResourceV1().DeviceClasses().Delete(ctx, name, metav1.DeleteOptions{})
	})
}

// createIslandNode creates a fresh DGX-1V (no labels-v1 yet: the agent writes them) without the
// device plugin, whose status declares DRAOptionalNodeOperations (as a kubelet with the gate on
// does) when `declares`, and waits until both kube-schedulers and the extender have seen it.
func (s *scenarioEnv) createIslandNode(sched *cluster.Process, name string, declares bool) string {
	s.t.Helper()
	n, err := nodeSpec{name: name, capture: dgx1V, noDevicePlugin: true, mutate: asFreshGPUNode}.build(s.name)
	if err != nil {
		s.t.Fatal(err)
	}
	if declares {
		n.Status.DeclaredFeatures = []string{"DRAOptionalNodeOperations"}
	}
	s.createNode(n)
	s.waitSchedulerLog("Add event for node", "node", n.Name)
	field := `node="` + n.Name + `"`
	if err := s.poll(seenTimeout, func(context.Context) (bool, error) {
		return anyLineContains(sched.Grep("Add event for node"), field), nil
	}); err != nil {
		s.t.Fatalf("the island kube-scheduler did not see node %s (see %s): %v", n.Name, sched.LogPath, err)
	}
	s.waitExtenderCaughtUp()
	ctx, cancel := apiContext()
	defer cancel()
	got, err := client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	if declares != slices.Contains(got.Status.DeclaredFeatures, "DRAOptionalNodeOperations") {
		s.t.Fatalf("node %s: the API server dropped status.declaredFeatures", n.Name)
	}
	return n.Name
}

// runAgentCompanion runs one pass of the agent with --companion-slice (usage given: no kubelet)
// and returns its log.
func (s *scenarioEnv) runAgentCompanion(agent, fakeNVML, node string) string {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, agent, "run", "--node", node, "--kubeconfig", cp.Kubeconfig,
		"--once", "--listen", "", "--nvml-lib", fakeNVML, "--used", "00000000",
		"--companion-slice", "--companion-driver", companionDriver)
	cmd.Env = append(os.Environ(), "GTE_FAKE_NVML_MACHINE=dgx1v")
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("gpu-topology-agent run --once --companion-slice: %v\n%s", err, out)
	}
	return string(out)
}

// expectCompanionSlice checks the slice as the API server stores it.
func (s *scenarioEnv) expectCompanionSlice(name, node string) {
	s.t.Helper()
	ctx, cancel := apiContext()
	defer cancel()
	slice, err := client.ResourceV1().ResourceSlices().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("get the companion slice: %v", err)
	}
	if !slices.Equal(slice.Spec.SkipNodeOperations, []resourcev1.SkipNodeOperation{"*"}) {
		s.t.Errorf("companion slice: skipNodeOperations %v, want [*]", slice.Spec.SkipNodeOperations)
	}
	if slice.Spec.Driver != companionDriver || slice.Spec.Pool.Name != node || slice.Spec.NodeName == nil || *slice.Spec.NodeName != node {
		s.t.Errorf("companion slice: driver %s, pool %s, nodeName %v", slice.Spec.Driver, slice.Spec.Pool.Name, slice.Spec.NodeName)
	}
	if len(slice.OwnerReferences) != 1 || slice.OwnerReferences[0].Kind != "Node" || slice.OwnerReferences[0].Name != node {
		s.t.Errorf("companion slice: ownerReferences %v, want the Node", slice.OwnerReferences)
	}
	if len(slice.Spec.Devices) != 8 {
		s.t.Fatalf("companion slice: %d devices, want 8", len(slice.Spec.Devices))
	}
	for gpu, d := range slice.Spec.Devices {
		bus := d.Attributes["resource.kubernetes.io/pciBusID"].StringValue
		island := d.Attributes["nvlinkIsland"].IntValue
		wantIsland := int64(gpu / 4 * 4) // cube-mesh: {0-3} is island 0, {4-7} island 4
		if d.Name != fmt.Sprintf("gpu-%d", gpu) || bus == nil || *bus != fakeNVMLBusID(gpu) || island == nil || *island != wantIsland {
			s.t.Errorf("companion device %d: %s bus %v island %v, want gpu-%d bus %s island %d",
				gpu, d.Name, bus, island, gpu, fakeNVMLBusID(gpu), wantIsland)
		}
	}
}

// islandClaimSpec is the claim spec of `gpu-topology-extender claim-template --gpus 2
// --nvlink-island` with the scenario's classes, as the binary under test writes it.
func (s *scenarioEnv) islandClaimSpec(gpuClass, linkClass string) resourcev1.ResourceClaimSpec {
	s.t.Helper()
	out, err := exec.Command(cfg.extender, "claim-template", "--gpus", "2", "--nvlink-island",
		"--device-class", gpuClass, "--companion-class", linkClass, "-o", "json").Output()
	if err != nil {
		s.t.Fatalf("claim-template --nvlink-island: %v", err)
	}
	var tmpl resourcev1.ResourceClaimTemplate
	if err := json.Unmarshal(out, &tmpl); err != nil {
		s.t.Fatalf("claim-template output: %v\n%s", err, out)
	}
	return tmpl.Spec.Spec
}

// allocatedByDriver reads the claim's allocation: the NVIDIA devices and the companions, each in
// the order allocated; every device must be of the node's pools.
func allocatedByDriver(s *scenarioEnv, claim, node string) (gpus, links []string) {
	s.t.Helper()
	got := s.getClaim(claim)
	if got.Status.Allocation == nil {
		s.t.Fatalf("claim %s is not allocated", claim)
	}
	for _, r := range got.Status.Allocation.Devices.Results {
		if r.Pool != node {
			s.t.Errorf("claim %s: device %s/%s/%s not of node %s", claim, r.Driver, r.Pool, r.Device, node)
		}
		switch r.Driver {
		case draDriver:
			gpus = append(gpus, r.Device)
		case companionDriver:
			links = append(links, r.Device)
		default:
			s.t.Errorf("claim %s: device of driver %s", claim, r.Driver)
		}
	}
	return gpus, links
}

// explainDraDevices asks the extender's explain for the pod and returns, on node, the devices its
// DRA prediction lists: NVIDIA's and the companions, each in the order predicted.
func (s *scenarioEnv) explainDraDevices(pod, node string) (gpus, links []string) {
	s.t.Helper()
	type device struct {
		Driver string `json:"driver"`
		Device string `json:"device"`
	}
	var view struct {
		Nodes []struct {
			Name string `json:"name"`
			Dra  *struct {
				Outcome string   `json:"outcome"`
				Devices []device `json:"devices"`
			} `json:"dra"`
		} `json:"nodes"`
	}
	ctx, cancel := apiContext()
	defer cancel()
	u := s.mode.verbsURL + "/explain?pod=" + url.QueryEscape(namespace+"/"+pod)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("explain: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("explain: HTTP %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&view); err != nil {
		s.t.Fatalf("explain: %v", err)
	}
	for _, n := range view.Nodes {
		if n.Name != node {
			continue
		}
		if n.Dra == nil || n.Dra.Outcome != "allocated" {
			s.t.Fatalf("explain on %s: no allocation predicted (%+v)", node, n.Dra)
		}
		for _, d := range n.Dra.Devices {
			if d.Driver == companionDriver {
				links = append(links, d.Device)
			} else {
				gpus = append(gpus, d.Device)
			}
		}
		return gpus, links
	}
	s.t.Fatalf("explain: node %s not listed", node)
	return nil, nil
}

// deleteSlice removes a slice the scenario did not label (the agent's).
func deleteSlice(name string) {
	ctx, cancel := apiContext()
	defer cancel()
	err := client.ResourceV1().ResourceSlices().Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		fmt.Fprintf(os.Stderr, "delete slice %s: %v\n", name, err)
	}
}
