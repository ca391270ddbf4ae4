package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpu-topology-extender/tests/e2e/internal/promtext"
	"gpu-topology-extender/tests/e2e/internal/topo"
)

// Dynamic Resource Allocation (docs/dra.md) against the real kube-scheduler v1.37.2: the test
// publishes a DeviceClass and ResourceSlices itself (no DRA driver, no kubelet) and plays
// kube-controller-manager's part (making a template's claim, releasing claims), which the bare
// control plane does not run. kube-scheduler allocates the claims and writes their status.

// draDriver is the NVIDIA DRA driver's name; the slices look like what it publishes.
const draDriver = "gpu.nvidia.com"

// draMinor is the device name's number the fake driver gives GPU i (`gpu-<minor>`): not the index,
// as on real machines, so only the bus ids in the labels map devices to GPUs.
func draMinor(gpu int) int { return (gpu + 3) % 8 }

// draBusID is GPU i's PCI address, as the slice publishes it and the labels-v1 `bus` key carries
// it (9 hex digits a GPU).
func draBusID(gpu int) string { return fmt.Sprintf("0000:%02x:00.0", 0x10+0x10*gpu) }

// draNodeSpec is a DGX-1V (hybrid cube mesh: GPUs 0-1, 4-5 NVLinked; 0-5, 1-4, 2-7, 3-6 across
// sockets) handing out its GPUs only through DRA: no nvidia.com/gpu allocatable, bus ids labelled.
func draNodeSpec(name string) nodeSpec { return draNodeOf(name, dgx1V, 8) }

// draNodeOf is a node of the capture (gpus GPUs) handing out its GPUs only through DRA, its bus
// ids (draBusID) labelled: labels-v1 chunks the 9 hex digits a GPU from 7 GPUs on (8 GPUs: bus0 of
// 60 characters, bus1 of 12).
func draNodeOf(name, capture string, gpus int) nodeSpec {
	return nodeSpec{name: name, capture: capture, noDevicePlugin: true, mutate: func(l map[string]string) {
		var bus strings.Builder
		for gpu := range gpus {
			bus.WriteString(strings.NewReplacer(":", "", ".", "").Replace(draBusID(gpu)))
		}
		topo.PutChunked(l, key("bus"), bus.String())
	}}
}

// draPlacementOdds: three claim pods (two by name, one from a template) among five DRA nodes that
// all have room: a blind extender passes with chance (1/5)^3 = 0.8%.
const draPlacementOdds = 1.0 / (5 * 5 * 5)

// draPlacement: on five DRA nodes whose slices list the GPUs in different orders, DRA's first-fit
// takes GPUs 4 and 5 (NVLink) on "nvlink-first" and a cross-socket pair on each of the others. Claim
// pods (a ResourceClaim by name, and one from a ResourceClaimTemplate) land on nvlink-first and
// their claims are allocated exactly the NVLink pair. Then, side by side on one cluster: a claim
// pod, an nvidia.com/gpu pod through the DeviceClass's extendedResourceName on the DRA node and an
// nvidia.com/gpu pod on a device-plugin node; the extender counts the allocated claims as used
// GPUs, each once, and a released claim frees them.
func draPlacement(s *scenarioEnv) {
	if !s.mode.watchesCluster() {
		s.t.Skip("needs the extender's cluster cache with --dra (cache and chart-identity modes)")
	}
	orders := map[string][]int{
		"nvlink-first": {4, 5, 0, 1, 2, 3, 6, 7},
		"cross-0-5":    {0, 5, 1, 2, 3, 4, 6, 7},
		"cross-1-4":    {1, 4, 0, 2, 3, 5, 6, 7},
		"cross-2-7":    {2, 7, 0, 1, 3, 4, 5, 6},
		"cross-3-6":    {6, 3, 0, 1, 2, 4, 5, 7},
	}
	class := s.name + "-gpu"
	s.createDeviceClass(class)
	var specs []nodeSpec
	for name := range orders {
		specs = append(specs, draNodeSpec(name))
	}
	specs = append(specs, nodeSpec{name: "device-plugin", capture: dgx1V})
	s.createNodes(specs...)
	for name, order := range orders {
		s.createGPUSlice(s.name+"-"+name, order)
	}
	s.waitDraCaughtUp(len(orders))
	good := s.name + "-nvlink-first"
	nvlinkPair := []string{fmt.Sprintf("gpu-%d", draMinor(4)), fmt.Sprintf("gpu-%d", draMinor(5))}

	// Placement: three claim pods one after the other, each released before the next.
	for i := range 2 {
		claim := s.createClaim(fmt.Sprintf("claim-%d", i), class, 2)
		s.waitClaimsCached()
		pod := s.newClaimPod(fmt.Sprintf("claim-pod-%d", i), claim, "")
		s.createPod(pod)
		s.expectBoundTo(pod.Name, good)
		s.expectAllocated(claim, good, nvlinkPair)
		s.waitExtenderFree(good, 6)
		s.deletePodAndWait(pod.Name)
		s.releaseClaim(claim)
		s.waitExtenderFree(good, 8)
	}
	tmpl := s.createClaimTemplate("tmpl", class, 2)
	pod := s.newClaimPod("template-pod", "", tmpl)
	s.createPod(pod)
	claim := s.makeTemplateClaim(pod.Name, tmpl)
	s.expectBoundTo(pod.Name, good)
	s.expectAllocated(claim, good, nvlinkPair)
	s.deletePodAndWait(pod.Name)
	s.releaseClaim(claim)
	s.waitExtenderFree(good, 8)

	// Side by side: a claim pod on the DRA node (GPUs 4, 5), an nvidia.com/gpu pod pinned there (the
	// scheduler makes its claim: the next two of the slice order, 0 and 1) and one pinned to the
	// device-plugin node.
	claim = s.createClaim("side-claim", class, 2)
	s.waitClaimsCached()
	claimPod := s.newClaimPod("side-claim-pod", claim, "")
	s.createPod(claimPod)
	s.expectBoundTo(claimPod.Name, good)
	s.expectAllocated(claim, good, nvlinkPair)
	// DRA-backed nvidia.com/gpu (the class's extendedResourceName) only where the release has it on
	// by default (alpha before v1.35: the API server drops the field, and the pod would find no
	// device plugin on the DRA node).
	extended := !needDRAExtendedResource.isUnmet()
	var extPod *corev1.Pod
	var extClaim string
	held := 2
	if extended {
		extPod = s.newPod("side-extended", "nvidia.com/gpu", 2)
		extPod.Spec.NodeSelector["kubernetes.io/hostname"] = good
		s.createPod(extPod)
		s.expectBoundTo(extPod.Name, good)
		extClaim = s.extendedResourceClaim(extPod.Name)
		s.expectAllocated(extClaim, good, []string{fmt.Sprintf("gpu-%d", draMinor(0)), fmt.Sprintf("gpu-%d", draMinor(1))})
		held = 4
	} else {
		s.t.Logf("Kubernetes %s: %s; the side-by-side nvidia.com/gpu pod on the DRA node is left out",
			cp.Release.Version, needDRAExtendedResource.unmet())
	}
	plugin := s.name + "-device-plugin"
	plainPod := s.newPod("side-plain", "nvidia.com/gpu", 2)
	plainPod.Spec.NodeSelector["kubernetes.io/hostname"] = plugin
	s.createPod(plainPod)
	s.expectBoundTo(plainPod.Name, plugin)
	// Four GPUs held by two claims; the nvidia.com/gpu pod's own request is not counted again.
	s.waitExtenderFree(good, 8-held)
	s.waitExtenderFree(plugin, 6)

	s.deletePodAndWait(claimPod.Name)
	s.releaseClaim(claim)
	s.waitExtenderFree(good, 10-held)
	if extended {
		s.deletePodAndWait(extPod.Name)
		s.releaseClaim(extClaim)
		s.waitExtenderFree(good, 8)
	}

	// Four claim pods were bound through the extender: at each bind kube-scheduler's allocation
	// was compared with the prediction (unknown when the claim watch had not brought it yet), and
	// none disagreed; no pod was passed through (the test waited for each claim to be cached).
	const binds = "gpu_topology_extender_dra_bind_predictions_total"
	match := s.scrapeValue(binds, map[string]string{"result": "match"})
	unknown := s.scrapeValue(binds, map[string]string{"result": "unknown"})
	s.t.Logf("bind predictions: match %v, unknown %v", match, unknown)
	if mismatch := s.scrapeValue(binds, map[string]string{"result": "mismatch"}); mismatch != 0 || match+unknown != 4 {
		s.t.Errorf("bind predictions: match %v, unknown %v, mismatch %v; want 4 without a mismatch", match, unknown, mismatch)
	}
	if passed := s.scrapeValue("gpu_topology_extender_dra_passthrough_total", nil); passed != 0 {
		s.t.Errorf("%v filter calls passed a pod through", passed)
	}
}

// createDeviceClass creates the NVIDIA chart's GPU class under this scenario's name, backing
// nvidia.com/gpu, and deletes it when the test ends.
func (s *scenarioEnv) createDeviceClass(name string) {
	s.t.Helper()
	ext := "nvidia.com/gpu"
	dc := &resourcev1.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{scenarioLabel: s.name}},
		Spec: resourcev1.DeviceClassSpec{
			Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
				Expression: "device.driver == '" + draDriver + "' && device.attributes['" + draDriver + "'].type == 'gpu'",
			}}},
			ExtendedResourceName: &ext,
		},
	}
	ctx, cancel := apiContext()
	defer cancel()
	if _, err := client.ResourceV1().DeviceClasses().Create(ctx, dc, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create DeviceClass %s: %v", name, err)
	}
	s.t.Cleanup(func() { s.deleteDraObjects(name) })
}

// createGPUSlice publishes node's eight GPUs in one slice, listed in `order` (GPU indices), as the
// NVIDIA driver does: one pool named after the node, devices gpu-<minor>.
func (s *scenarioEnv) createGPUSlice(node string, order []int) {
	s.t.Helper()
	s.createGPUSliceWithBusIDs(node, order, draBusID)
}

// createGPUSliceWithBusIDs is createGPUSlice with each GPU's pciBusID from busID.
func (s *scenarioEnv) createGPUSliceWithBusIDs(node string, order []int, busID func(int) string) {
	s.t.Helper()
	str := func(v string) resourcev1.DeviceAttribute { return resourcev1.DeviceAttribute{StringValue: &v} }
	var devices []resourcev1.Device
	for _, gpu := range order {
		devices = append(devices, resourcev1.Device{
			Name: fmt.Sprintf("gpu-%d", draMinor(gpu)),
			Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{
				"type":                            str("gpu"),
				"productName":                     str("Tesla V100-SXM2-16GB"),
				"resource.kubernetes.io/pciBusID": str(busID(gpu)),
				"resource.kubernetes.io/pcieRoot": str(fmt.Sprintf("pci0000:%02x", gpu/4)),
			},
		})
	}
	s.publishSlice(node, devices)
}

// publishSlice creates node's one slice of the devices, in one pool named after the node.
func (s *scenarioEnv) publishSlice(node string, devices []resourcev1.Device) {
	s.t.Helper()
	slice := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-" + draDriver, Labels: map[string]string{scenarioLabel: s.name}},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   draDriver,
			NodeName: &node,
			Pool:     resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			Devices:  devices,
		},
	}
	ctx, cancel := apiContext()
	defer cancel()
	if _, err := client.ResourceV1().ResourceSlices().Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create ResourceSlice for %s: %v", node, err)
	}
}

// waitDraCaughtUp waits until the extender's cache holds the scenario's slices (its DRA gauges
// follow at the observer's 2 s interval), then gives kube-scheduler's informer the same time.
func (s *scenarioEnv) waitDraCaughtUp(slices int) {
	s.t.Helper()
	s.waitScrapeValue(cacheGauge, map[string]string{"kind": "resourceslice"}, float64(slices))
	time.Sleep(2 * time.Second)
}

// waitClaimsCached waits until the extender's cache holds as many ResourceClaims as the API
// server. A claim pod scheduled before its claim reached the cache is passed through (placed
// blind, gpu_topology_extender_dra_passthrough_total{reason="claim_not_cached"}), which is the
// documented behaviour but not what this scenario asserts.
func (s *scenarioEnv) waitClaimsCached() {
	s.t.Helper()
	last := ""
	err := s.poll(seenTimeout, func(ctx context.Context) (bool, error) {
		claims, err := client.ResourceV1().ResourceClaims(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		samples, err := promtext.Scrape(ctx, s.mode.metricsURL)
		if err != nil {
			return false, nil
		}
		cached := samples.Value(cacheGauge, map[string]string{"kind": "resourceclaim"})
		last = fmt.Sprintf("API server %d, extender %v", len(claims.Items), cached)
		return cached == float64(len(claims.Items)), nil
	})
	if err != nil {
		s.t.Fatalf("the extender's cache never held the claims (last: %s): %v", last, err)
	}
}

func (s *scenarioEnv) claimSpec(class string, count int64) resourcev1.ResourceClaimSpec {
	return resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
		Name:    "gpus",
		Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: count},
	}}}}
}

// createClaim creates a ResourceClaim for count GPUs of the class and returns its name.
func (s *scenarioEnv) createClaim(name, class string, count int64) string {
	s.t.Helper()
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: s.name + "-" + name, Namespace: namespace, Labels: map[string]string{scenarioLabel: s.name}},
		Spec:       s.claimSpec(class, count),
	}
	ctx, cancel := apiContext()
	defer cancel()
	if _, err := client.ResourceV1().ResourceClaims(namespace).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create ResourceClaim %s: %v", claim.Name, err)
	}
	return claim.Name
}

func (s *scenarioEnv) createClaimTemplate(name, class string, count int64) string {
	s.t.Helper()
	tmpl := &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: s.name + "-" + name, Namespace: namespace, Labels: map[string]string{scenarioLabel: s.name}},
		Spec:       resourcev1.ResourceClaimTemplateSpec{Spec: s.claimSpec(class, count)},
	}
	ctx, cancel := apiContext()
	defer cancel()
	if _, err := client.ResourceV1().ResourceClaimTemplates(namespace).Create(ctx, tmpl, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create ResourceClaimTemplate %s: %v", tmpl.Name, err)
	}
	return tmpl.Name
}

// newClaimPod is a pod of this scenario whose container uses one claim "gpus": the named claim, or
// else one made from the template.
func (s *scenarioEnv) newClaimPod(name, claim, template string) *corev1.Pod {
	pod := s.newPod(name, "cpu", 1)
	entry := corev1.PodResourceClaim{Name: "gpus"}
	if claim != "" {
		entry.ResourceClaimName = &claim
	} else {
		entry.ResourceClaimTemplateName = &template
	}
	pod.Spec.ResourceClaims = []corev1.PodResourceClaim{entry}
	pod.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpus"}}
	return pod
}

// makeTemplateClaim does what kube-controller-manager's resourceclaim controller does for a
// template entry: creates the claim from the template, owned by the pod, and records its name in
// the pod's status.resourceClaimStatuses (kube-scheduler waits for that before scheduling).
func (s *scenarioEnv) makeTemplateClaim(podName, template string) string {
	s.t.Helper()
	pod, name := s.createTemplateClaim(podName, template)
	s.recordTemplateClaim(pod, name)
	return name
}

// createTemplateClaim is makeTemplateClaim's first half: the claim made from the template, owned
// by the pod, and in the extender's cache. It returns the pod as read and the claim's name.
func (s *scenarioEnv) createTemplateClaim(podName, template string) (*corev1.Pod, string) {
	s.t.Helper()
	ctx, cancel := apiContext()
	defer cancel()
	pod, err := client.CoreV1().Pods(namespace).Get(ctx, podName, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("get pod %s: %v", podName, err)
	}
	tmpl, err := client.ResourceV1().ResourceClaimTemplates(namespace).Get(ctx, template, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("get template %s: %v", template, err)
	}
	yes := true
	claim := &resourcev1.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name:        podName + "-gpus",
			Namespace:   namespace,
			Labels:      map[string]string{scenarioLabel: s.name},
			Annotations: map[string]string{"resource.kubernetes.io/pod-claim-name": "gpus"},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: &yes, BlockOwnerDeletion: &yes,
			}},
		},
		Spec: tmpl.Spec.Spec,
	}
	if _, err := client.ResourceV1().ResourceClaims(namespace).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create the template's claim %s: %v", claim.Name, err)
	}
	// Before kube-scheduler may schedule the pod: the extender's cache has the claim.
	s.waitClaimsCached()
	return pod, claim.Name
}

// recordTemplateClaim is makeTemplateClaim's second half: the claim's name in the pod's
// status.resourceClaimStatuses, after which kube-scheduler schedules the pod.
func (s *scenarioEnv) recordTemplateClaim(pod *corev1.Pod, name string) {
	s.t.Helper()
	ctx, cancel := apiContext()
	defer cancel()
	pod.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpus", ResourceClaimName: &name}}
	if _, err := client.CoreV1().Pods(namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{}); err != nil {
		s.t.Fatalf("record claim %s in pod %s's status: %v", name, pod.Name, err)
	}
}

// extendedResourceClaim is the claim kube-scheduler made for the pod's DRA-backed extended
// resources (status.extendedResourceClaimStatus), once bound.
func (s *scenarioEnv) extendedResourceClaim(podName string) string {
	s.t.Helper()
	var name string
	err := s.poll(seenTimeout, func(ctx context.Context) (bool, error) {
		pod, err := client.CoreV1().Pods(namespace).Get(ctx, podName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if st := pod.Status.ExtendedResourceClaimStatus; st != nil {
			name = st.ResourceClaimName
		}
		return name != "", nil
	})
	if err != nil {
		s.t.Fatalf("pod %s has no extended-resource claim: %v", podName, err)
	}
	return name
}

// expectAllocated asserts that the claim is allocated exactly `devices` (in this order) of node's
// pool.
func (s *scenarioEnv) expectAllocated(claim, node string, devices []string) {
	s.t.Helper()
	got := s.getClaim(claim)
	if got.Status.Allocation == nil {
		s.t.Fatalf("claim %s is not allocated", claim)
	}
	var names []string
	for _, r := range got.Status.Allocation.Devices.Results {
		if r.Driver != draDriver || r.Pool != node {
			s.t.Errorf("claim %s: device %s/%s/%s, want one of pool %s", claim, r.Driver, r.Pool, r.Device, node)
		}
		names = append(names, r.Device)
	}
	if !slices.Equal(names, devices) {
		s.t.Errorf("claim %s allocated %v, want %v", claim, names, devices)
	}
}

// getClaim reads the claim from the API server.
func (s *scenarioEnv) getClaim(name string) *resourcev1.ResourceClaim {
	s.t.Helper()
	ctx, cancel := apiContext()
	defer cancel()
	claim, err := client.ResourceV1().ResourceClaims(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("get claim %s: %v", name, err)
	}
	return claim
}

// releaseClaim does what kube-controller-manager does once a claim's pods are gone: clears its
// reservation and allocation, then the claim is deleted (its finalizer removed).
func (s *scenarioEnv) releaseClaim(name string) {
	s.t.Helper()
	ctx, cancel := apiContext()
	defer cancel()
	if err := releaseAndDeleteClaim(ctx, name); err != nil {
		s.t.Fatalf("release claim %s: %v", name, err)
	}
}

func releaseAndDeleteClaim(ctx context.Context, name string) error {
	claims := client.ResourceV1().ResourceClaims(namespace)
	claim, err := claims.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if claim.Status.Allocation != nil || len(claim.Status.ReservedFor) > 0 {
		claim.Status.Allocation = nil
		claim.Status.ReservedFor = nil
		if claim, err = claims.UpdateStatus(ctx, claim, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	if len(claim.Finalizers) > 0 {
		claim.Finalizers = nil
		if _, err = claims.Update(ctx, claim, metav1.UpdateOptions{}); err != nil {
			return err
		}
	}
	if err := claims.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// deleteDraObjects removes what the scenario published: its claims (released first), template,
// slices and the class.
func (s *scenarioEnv) deleteDraObjects(class string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The pods go first (the scenario's own cleanup runs after this one): claims reserved for
	// running pods would otherwise be allocated again.
	zero := int64(0)
	for _, p := range s.pods {
		_ = client.CoreV1().Pods(namespace).Delete(ctx, p, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	}
	claims, err := client.ResourceV1().ResourceClaims(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		s.t.Errorf("list claims: %v", err)
	}
	if claims != nil {
		for _, c := range claims.Items {
			// The scenario's own claims and the ones kube-scheduler made for its pods.
			if c.Labels[scenarioLabel] == s.name || strings.HasPrefix(c.Name, s.name+"-") {
				if err := releaseAndDeleteClaim(ctx, c.Name); err != nil {
					s.t.Errorf("release claim %s: %v", c.Name, err)
				}
			}
		}
	}
	sel := metav1.ListOptions{LabelSelector: scenarioLabel + "=" + s.name}
	if err := client.ResourceV1().ResourceClaimTemplates(namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil {
		s.t.Errorf("delete templates: %v", err)
	}
	if err := client.ResourceV1().ResourceSlices().DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil {
		s.t.Errorf("delete slices: %v", err)
	}
	if err := client.ResourceV1().DeviceClasses().Delete(ctx, class, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		s.t.Errorf("delete DeviceClass %s: %v", class, err)
	}
}

// waitExtenderFree waits until the extender's GET {prefix}/nodes shows the node with `want` free
// GPUs (its cache follows the claim watch).
func (s *scenarioEnv) waitExtenderFree(node string, want int) {
	s.t.Helper()
	last := -1
	err := s.poll(seenTimeout, func(ctx context.Context) (bool, error) {
		free, err := s.extenderFreeGPUs(ctx, node)
		if err != nil {
			return false, nil
		}
		last = free
		return free == want, nil
	})
	if err != nil {
		s.t.Fatalf("the extender never showed %d free GPUs on %s (last %d)", want, node, last)
	}
}

func (s *scenarioEnv) extenderFreeGPUs(ctx context.Context, node string) (int, error) {
	var listing struct {
		Nodes []struct {
			Name     string `json:"name"`
			FreeGPUs int    `json:"freeGpus"`
		} `json:"nodes"`
	}
	if err := s.getExtenderJSON(ctx, "/nodes", &listing); err != nil {
		return 0, err
	}
	for _, n := range listing.Nodes {
		if n.Name == node {
			return n.FreeGPUs, nil
		}
	}
	return 0, fmt.Errorf("node %s not listed", node)
}

// extenderCall sends a request to the extender's verb prefix (path "/nodes", "/explain") and
// returns the body of a 200 answer.
func (s *scenarioEnv) extenderCall(ctx context.Context, method, path string, body io.Reader) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, s.mode.verbsURL+path, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	httpClient := http.DefaultClient
	if strings.HasPrefix(s.mode.verbsURL, "https:") {
		httpClient = insecureLoopbackClient()
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, answer)
	}
	return answer, nil
}
