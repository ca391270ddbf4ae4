package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DeviceTaintRules (docs/dra.md, "Device taint rules") against the real kube-scheduler v1.37.2,
// whose default gates (DRADeviceTaints, DRADeviceTaintRules: GA, on) and API groups (resource.k8s.io/v1
// devicetaintrules served) need nothing set.

// draTaintRuleOdds: three claim pods among five DRA nodes whose slices, read without the rule, all
// offer a cross-socket pair first: an extender blind to the rule (or to GPUs) picks the ruled node
// with chance (1/5)^3 = 0.8%.
const draTaintRuleOdds = 1.0 / (5 * 5 * 5)

// draTaintRule: node "ruled" lists GPUs 0 5 4 1 ..., so DRA's first-fit of two takes 0 and 5, a
// pair across the sockets, like the first pair of every other node. A DeviceTaintRule puts a
// NoSchedule taint on GPU 0's device of that node's pool only: kube-scheduler's allocator then
// skips it and takes 5 and 4, an NVLink pair. The extender, merging the rule into the device's
// taints, predicts that pair (explain, asked while the pod waits at a scheduling gate) and steers
// each claim pod to "ruled"; the claim is allocated exactly the predicted devices. Once the rule
// is deleted, the extender predicts 0 and 5 there again.
func draTaintRule(s *scenarioEnv) {
	if !s.mode.watchesCluster() {
		s.t.Skip("needs the extender's cluster cache with --dra (cache and chart-identity modes)")
	}
	orders := map[string][]int{
		"ruled":     {0, 5, 4, 1, 2, 3, 6, 7},
		"cross-5-0": {5, 0, 1, 2, 3, 4, 6, 7},
		"cross-1-4": {1, 4, 0, 2, 3, 5, 6, 7},
		"cross-2-7": {2, 7, 0, 1, 3, 4, 5, 6},
		"cross-3-6": {6, 3, 0, 1, 2, 4, 5, 7},
	}
	class := s.name + "-gpu"
	s.createDeviceClass(class)
	var specs []nodeSpec
	for name := range orders {
		specs = append(specs, draNodeSpec(name))
	}
	s.createNodes(specs...)
	for name, order := range orders {
		s.createGPUSlice(s.name+"-"+name, order)
	}
	s.waitDraCaughtUp(len(orders))
	ruled := s.name + "-ruled"
	device := func(gpu int) string { return fmt.Sprintf("gpu-%d", draMinor(gpu)) }

	rule := s.createTaintRule("gpu-0-maintenance", ruled, device(0))
	s.waitScrapeValue(cacheGauge, map[string]string{"kind": "devicetaintrule"}, 1)
	s.waitExtenderFree(ruled, 7) // the tainted GPU is no longer one first-fit can take
	s.waitDraCaughtUp(len(orders))

	binds := "gpu_topology_extender_dra_bind_predictions_total"
	mismatches := s.scrapeValue(binds, map[string]string{"result": "mismatch"})
	nvlinkPair := []string{device(5), device(4)}
	for i := range 3 {
		claim := s.createClaim(fmt.Sprintf("claim-%d", i), class, 2)
		s.waitClaimsCached()
		pod := s.newGatedClaimPod(fmt.Sprintf("claim-pod-%d", i), claim)
		s.createPod(pod)
		predicted := s.expectDraPrediction(pod.Name, ruled, nvlinkPair, true)
		s.removeSchedulingGates(pod.Name)
		s.expectBoundTo(pod.Name, ruled)
		s.expectAllocated(claim, ruled, predicted)
		s.deletePodAndWait(pod.Name)
		s.releaseClaim(claim)
		s.waitExtenderFree(ruled, 7)
	}
	if now := s.scrapeValue(binds, map[string]string{"result": "mismatch"}); now != mismatches {
		s.t.Errorf("%v binds of claim pods disagreed with the prediction", now-mismatches)
	}

	// The rule deleted: GPU 0 is back, and first-fit on "ruled" takes 0 and 5 again.
	s.deleteTaintRule(rule)
	s.waitExtenderFree(ruled, 8)
	claim := s.createClaim("after", class, 2)
	s.waitClaimsCached()
	pod := s.newGatedClaimPod("after-pod", claim)
	s.createPod(pod)
	s.expectDraPrediction(pod.Name, ruled, []string{device(0), device(5)}, false)
}

// createTaintRule creates a DeviceTaintRule with a NoSchedule taint on one device of node's pool
// and deletes it when the test ends; it returns its name.
func (s *scenarioEnv) createTaintRule(name, node, device string) string {
	s.t.Helper()
	driver := draDriver
	rule := &resourcev1.DeviceTaintRule{
		ObjectMeta: metav1.ObjectMeta{Name: s.name + "-" + name, Labels: map[string]string{scenarioLabel: s.name}},
		Spec: resourcev1.DeviceTaintRuleSpec{
			DeviceSelector: &resourcev1.DeviceTaintSelector{Driver: &driver, Pool: &node, Device: &device},
			Taint:          resourcev1.DeviceTaint{Key: "e2e.gputopo.dev/maintenance", Effect: resourcev1.DeviceTaintEffectNoSchedule},
		},
	}
	ctx, cancel := apiContext()
	defer cancel()
	if _, err := client.ResourceV1().DeviceTaintRules().Create(ctx, rule, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create DeviceTaintRule %s: %v", rule.Name, err)
	}
	s.t.Cleanup(func() { s.deleteTaintRule(rule.Name) })
	return rule.Name
}

func (s *scenarioEnv) deleteTaintRule(name string) {
	ctx, cancel := apiContext()
	defer cancel()
	if err := client.ResourceV1().DeviceTaintRules().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		s.t.Errorf("delete DeviceTaintRule %s: %v", name, err)
	}
}

// newGatedClaimPod is a claim pod that kube-scheduler leaves alone until removeSchedulingGates:
// the extender can be asked what it predicts before the claim is allocated.
func (s *scenarioEnv) newGatedClaimPod(name, claim string) *corev1.Pod {
	pod := s.newClaimPod(name, claim, "")
	pod.Spec.SchedulingGates = []corev1.PodSchedulingGate{{Name: "e2e.gputopo.dev/explain-first"}}
	return pod
}

func (s *scenarioEnv) removeSchedulingGates(pod string) {
	s.t.Helper()
	ctx, cancel := apiContext()
	defer cancel()
	got, err := client.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
	if err == nil {
		got.Spec.SchedulingGates = nil
		_, err = client.CoreV1().Pods(namespace).Update(ctx, got, metav1.UpdateOptions{})
	}
	if err != nil {
		s.t.Fatalf("remove the scheduling gate of %s: %v", pod, err)
	}
}

// draExplain is the part of GET /explain?pod= a DRA prediction fills in, node by node.
type draExplain struct {
	Nodes []struct {
		Name    string `json:"name"`
		Verdict string `json:"verdict"`
		Score   int    `json:"score"`
		Dra     *struct {
			Outcome string `json:"outcome"`
			Devices []struct {
				Pool   string `json:"pool"`
				Device string `json:"device"`
			} `json:"devices"`
		} `json:"dra"`
	} `json:"nodes"`
}

// expectDraPrediction asks the extender's explain about the pending pod and checks that it
// predicts DRA allocates `devices` on node (and, with best, that node scores above every other);
// it returns the predicted devices.
func (s *scenarioEnv) expectDraPrediction(pod, node string, devices []string, best bool) []string {
	s.t.Helper()
	ctx, cancel := apiContext()
	defer cancel()
	var view draExplain
	if err := s.getExtenderJSON(ctx, "/explain?pod="+url.QueryEscape(namespace+"/"+pod), &view); err != nil {
		s.t.Fatalf("explain %s: %v", pod, err)
	}
	var predicted []string
	top, topScore := "", -1
	for _, n := range view.Nodes {
		if n.Verdict == "fit" && n.Score > topScore {
			top, topScore = n.Name, n.Score
		} else if n.Verdict == "fit" && n.Score == topScore {
			top = "" // a tie
		}
		if n.Name != node || n.Dra == nil {
			continue
		}
		for _, d := range n.Dra.Devices {
			if d.Pool == node {
				predicted = append(predicted, d.Device)
			}
		}
	}
	if !slices.Equal(predicted, devices) {
		s.t.Fatalf("explain %s predicts %v on %s, want %v", pod, predicted, node, devices)
	}
	if best && top != node {
		s.t.Errorf("explain %s: %s is not the one best-scored node (best %q, score %d)", pod, node, top, topScore)
	}
	return predicted
}

// getExtenderJSON GETs one of the extender's endpoints (path after the verbs URL) into out.
func (s *scenarioEnv) getExtenderJSON(ctx context.Context, path string, out any) error {
	body, err := s.extenderCall(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	return json.Unmarshal(body, out)
}
