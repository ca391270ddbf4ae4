package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// bindAnnotatedAtomically: with the extender binding (cache and chart-identity modes), every pod of a
// burst is bound with the gputopo.dev/gpus annotation already on it. A watch on the pods, opened
// before they exist, must never show a pod with spec.nodeName set and no annotation: the extender
// sends one Binding whose metadata carries the annotation, and the API server writes both in one
// update. A bind made of a Binding followed by a separate PATCH shows every pod bound without it
// first.
func bindAnnotatedAtomically(s *scenarioEnv) {
	if !s.mode.mode.cache {
		s.t.Skip("nodes mode: kube-scheduler's DefaultBinder binds, not the extender")
	}
	const pods = 20 // of the 24 GPUs
	s.createNodes(nodeSpec{name: "a", capture: dgx1V}, nodeSpec{name: "b", capture: dgx1V},
		nodeSpec{name: "c", capture: hgxA100})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := client.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{
		LabelSelector: scenarioLabel + "=" + s.name,
	})
	if err != nil {
		s.t.Fatalf("watch pods: %v", err)
	}
	var (
		mu         sync.Mutex
		boundSeen  = map[string]bool{}
		violations []string
	)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for ev := range w.ResultChan() {
			if ev.Type != watch.Added && ev.Type != watch.Modified {
				continue
			}
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || p.Spec.NodeName == "" {
				continue
			}
			mu.Lock()
			boundSeen[p.Name] = true
			if _, annotated := p.Annotations[key("gpus")]; !annotated {
				violations = append(violations, fmt.Sprintf("%s bound to %s without %s (resourceVersion %s)",
					p.Name, p.Spec.NodeName, key("gpus"), p.ResourceVersion))
			}
			mu.Unlock()
		}
	}()

	s.createPodsConcurrently(pods, 6)
	bound := s.waitAllBound(5 * time.Minute)
	for _, p := range bound {
		if _, ok := p.Annotations[key("gpus")]; !ok {
			s.t.Errorf("pod %s bound to %s without %s", p.Name, p.Spec.NodeName, key("gpus"))
		}
	}
	s.checkNoGPUGivenTwice(bound)

	// Every bound state the watch will deliver has been written by now; give it time to arrive.
	err = s.poll(seenTimeout, func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return len(boundSeen) == pods, nil
	})
	cancel()
	w.Stop()
	<-watched
	mu.Lock()
	defer mu.Unlock()
	if err != nil {
		s.t.Errorf("the watch showed %d of %d pods bound: %v", len(boundSeen), pods, err)
	}
	for _, v := range violations {
		s.t.Error(v)
	}
}

// bindWrongUIDRefused: a bind whose PodUID is not the pod's (the pod was deleted and re-created
// under the same name after kube-scheduler decided) is refused by the API server's UID
// precondition; the extender reports the refusal and releases the GPUs it had reserved, so the
// right UID then binds the same pod to the same node although the pod needs every GPU there. The
// pod names a scheduler that does not exist, so only this test's requests bind it.
func bindWrongUIDRefused(s *scenarioEnv) {
	if !s.mode.mode.cache {
		s.t.Skip("nodes mode: the extender has no cluster connection to bind with")
	}
	s.createNodes(nodeSpec{name: "full", capture: dgx1V})
	node := s.name + "-full"
	pod := s.newPod("whole-node", "nvidia.com/gpu", 8)
	pod.Spec.SchedulerName = "gte-e2e-nobody"
	s.createPod(pod)
	ctx, cancel := apiContext()
	defer cancel()
	created, err := client.CoreV1().Pods(namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("get pod %s: %v", pod.Name, err)
	}

	refused := s.extenderBind(pod.Name, "00000000-0000-0000-0000-000000000000", node)
	if refused == "" {
		s.t.Fatalf("bind with a wrong UID answered no error")
	}
	if !strings.Contains(refused, "409") || !strings.Contains(refused, "recondition") {
		s.t.Errorf("bind with a wrong UID: error %q does not carry the API server's 409 precondition failure", refused)
	}
	still, err := client.CoreV1().Pods(namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("get pod %s: %v", pod.Name, err)
	}
	if still.Spec.NodeName != "" {
		s.t.Fatalf("pod bound to %s despite the wrong UID", still.Spec.NodeName)
	}

	// Had the refused bind kept its reservation, no GPU would be left for the right UID.
	if msg := s.extenderBind(pod.Name, string(created.UID), node); msg != "" {
		s.t.Fatalf("bind with the right UID after the refused one: %s", msg)
	}
	got, err := client.CoreV1().Pods(namespace).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("get pod %s: %v", pod.Name, err)
	}
	if got.Spec.NodeName != node {
		s.t.Errorf("pod bound to %q, want %s", got.Spec.NodeName, node)
	}
	if v := got.Annotations[key("gpus")]; v != "0,1,2,3,4,5,6,7" {
		s.t.Errorf("pod annotated %s=%q, want all eight GPUs", key("gpus"), v)
	}
}

// extenderBind posts ExtenderBindingArgs to the extender as kube-scheduler would and returns the
// Error field of the answer ("" for a success).
func (s *scenarioEnv) extenderBind(pod, uid, node string) string {
	s.t.Helper()
	body, err := json.Marshal(map[string]string{
		"PodName": pod, "PodNamespace": namespace, "PodUID": uid, "Node": node,
	})
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := apiContext()
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.mode.verbsURL+"/bind", bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("POST bind: %v", err)
	}
	defer resp.Body.Close()
	var result struct{ Error string }
	if err := json.NewDecoder(resp.Body).Decode(&result); err != nil {
		s.t.Fatalf("POST bind: HTTP %d, undecodable answer: %v", resp.StatusCode, err)
	}
	return result.Error
}
