package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"

	"gpu-topology-extender/tests/e2e/internal/cluster"
)

// scenarioLabel ties a scenario's nodes and pods together: pods select their scenario's nodes, so
// nodes another scenario left behind cannot attract them.
const scenarioLabel = "e2e.gputopo.dev/scenario"

const (
	pollInterval = 250 * time.Millisecond
	// bindTimeout bounds the wait for one pod; kube-scheduler's longest retry backoff is 10 s.
	bindTimeout = 90 * time.Second
	// seenTimeout bounds the wait for kube-scheduler's informer and the extender's watch to reflect
	// an object the harness created or deleted. They usually take milliseconds (the extender's
	// cache gauges up to its 2 s metrics interval); the bound is for a machine under heavy load.
	seenTimeout = 90 * time.Second
)

// gpuImage is never pulled: there is no kubelet.
const gpuImage = "registry.k8s.io/pause:3.10"

// scenarioEnv is what one scenario works with. Everything it creates is deleted when t ends.
type scenarioEnv struct {
	t     *testing.T
	mode  *modeEnv
	name  string // scenario label value; also the prefix of its object names
	pods  []string
	nodes []string
	// gangScheduler is the scenario's own GenericWorkload kube-scheduler (groups_test.go), if any.
	gangScheduler *cluster.Process
}

func newScenarioEnv(t *testing.T, m *modeEnv, name string) *scenarioEnv {
	s := &scenarioEnv{t: t, mode: m, name: m.mode.name + "-" + name}
	t.Cleanup(s.cleanup)
	return s
}

// apiTimeout bounds one API call.
const apiTimeout = 30 * time.Second

func apiContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), apiTimeout)
}

// createNodes creates the nodes with a Ready condition and capacity, then waits until
// kube-scheduler and, in cache mode, the extender have seen every one of them: a pod created
// before that could be placed among the nodes seen so far, which is not what a scenario asserts.
func (s *scenarioEnv) createNodes(specs ...nodeSpec) {
	s.t.Helper()
	var names []string
	for _, spec := range specs {
		node, err := spec.build(s.name)
		if err != nil {
			s.t.Fatalf("node %s: %v", spec.name, err)
		}
		s.createNode(node)
		names = append(names, node.Name)
	}
	for _, name := range names {
		s.waitSchedulerLog("Add event for node", "node", name)
	}
	s.waitExtenderCaughtUp()
}

// createNode creates the node with its status in one request, as a kubelet registers a node: the
// scheduler's informer then sees capacity and the Ready condition in the same event as the node.
func (s *scenarioEnv) createNode(node *corev1.Node) {
	s.t.Helper()
	ctx, cancel := apiContext()
	defer cancel()
	created, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		s.t.Fatalf("create node %s: %v", node.Name, err)
	}
	s.nodes = append(s.nodes, node.Name)
	if len(created.Status.Allocatable) == 0 {
		s.t.Fatalf("node %s: kube-apiserver dropped the status on create", node.Name)
	}
}

// waitSchedulerLog waits until kube-scheduler (at --v=3) has logged msg for the object named name,
// e.g. `"Add event for node" node="cache-x-dgx1v"`: its informer has handled that event.
func (s *scenarioEnv) waitSchedulerLog(msg, key, name string) {
	s.t.Helper()
	field := key + `="` + name + `"`
	err := s.poll(seenTimeout, func(context.Context) (bool, error) {
		return anyLineContains(s.mode.scheduler.Grep(msg), field), nil
	})
	if err != nil {
		s.t.Fatalf("kube-scheduler did not log %q for %s within %s (see %s): %v",
			msg, field, seenTimeout, s.mode.scheduler.LogPath, err)
	}
}

// waitExtenderCaughtUp waits, in cache mode, until the extender's cache holds exactly the nodes and
// pods the API server has and no reservation is pending: its watch has then seen every creation
// and deletion so far. Equal counts mean equal contents only if the scenario changed the cluster in
// one direction since the last wait (only added, or only deleted) and the gauge had shown the
// state in between (see deletePodAndWait). A no-op without a cache of its own.
func (s *scenarioEnv) waitExtenderCaughtUp() {
	s.t.Helper()
	if err := s.extenderCaughtUp(); err != nil {
		s.t.Fatal(err)
	}
}

func (s *scenarioEnv) extenderCaughtUp() error {
	if !s.mode.watchesCluster() {
		return nil
	}
	var last string
	err := s.poll(seenTimeout, func(ctx context.Context) (bool, error) {
		want, err := apiObjectCounts(ctx)
		if err != nil {
			return false, err
		}
		got, err := extenderCacheCounts(ctx, s.mode.metricsURL)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = fmt.Sprintf("extender cache %v, API server %v", got, want)
		return got == want, nil
	})
	if err != nil {
		return fmt.Errorf("extender cache did not catch up within %s (last: %s): %w", seenTimeout, last, err)
	}
	return nil
}

// newPod returns a pod of this scenario requesting count of resource (requests = limits).
func (s *scenarioEnv) newPod(name, res string, count int64) *corev1.Pod {
	q := *resource.NewQuantity(count, resource.DecimalSI)
	list := corev1.ResourceList{corev1.ResourceName(res): q}
	zero := int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      s.name + "-" + name,
			Namespace: namespace,
			Labels:    map[string]string{scenarioLabel: s.name},
		},
		Spec: corev1.PodSpec{
			SchedulerName:                 s.mode.schedulerName,
			NodeSelector:                  map[string]string{scenarioLabel: s.name},
			TerminationGracePeriodSeconds: &zero,
			Containers: []corev1.Container{{
				Name:      "main",
				Image:     gpuImage,
				Resources: corev1.ResourceRequirements{Requests: list, Limits: list},
			}},
		},
	}
}

// createPod creates pod and remembers it for cleanup and diagnostics.
func (s *scenarioEnv) createPod(pod *corev1.Pod) {
	s.t.Helper()
	ctx, cancel := apiContext()
	defer cancel()
	if _, err := client.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create pod %s: %v", pod.Name, err)
	}
	s.pods = append(s.pods, pod.Name)
}

// pollBound waits until kube-scheduler has bound the pod and returns the node's name, or the
// error after bindTimeout.
func (s *scenarioEnv) pollBound(pod string) (string, error) {
	var node string
	err := s.poll(bindTimeout, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = p.Spec.NodeName
		return node != "", nil
	})
	return node, err
}

// waitBound waits until kube-scheduler has bound the pod and returns the node's name.
func (s *scenarioEnv) waitBound(pod string) string {
	s.t.Helper()
	node, err := s.pollBound(pod)
	if err != nil {
		s.t.Fatalf("pod %s not bound within %s: %v", pod, bindTimeout, err)
	}
	return node
}

// expectBoundTo asserts that the pod is bound to want.
func (s *scenarioEnv) expectBoundTo(pod, want string) {
	s.t.Helper()
	if got := s.waitBound(pod); got != want {
		s.t.Errorf("pod %s bound to %s, want %s", pod, got, want)
	}
}

// expectUnschedulable waits until the pod's PodScheduled condition or a FailedScheduling event
// carries a message containing the extender's reasonPrefix followed (not necessarily directly) by
// reason, and asserts the pod stayed unbound.
func (s *scenarioEnv) expectUnschedulable(pod, reason string) {
	s.t.Helper()
	last, err := s.waitUnschedulable(pod, func(m string) bool { return hasReason(m, reason) })
	if err != nil {
		s.t.Fatalf("pod %s: no FailedScheduling message with %q...%q within %s (last message: %q): %v",
			pod, reasonPrefix, reason, bindTimeout, last, err)
	}
}

// waitUnschedulable waits until the pod's PodScheduled condition or a FailedScheduling event
// carries a message that matches, failing at once if the pod is bound. It returns the last
// message seen.
func (s *scenarioEnv) waitUnschedulable(pod string, match func(string) bool) (string, error) {
	var last string
	err := s.poll(bindTimeout, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Spec.NodeName != "" {
			return false, fmt.Errorf("pod was bound to %s", p.Spec.NodeName)
		}
		msgs := []string{}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
				msgs = append(msgs, c.Message)
			}
		}
		events, err := podEvents(ctx, p)
		if err != nil {
			return false, err
		}
		for _, e := range events {
			if e.Reason == "FailedScheduling" {
				msgs = append(msgs, e.Message)
			}
		}
		for _, m := range msgs {
			last = m
			if match(m) {
				return true, nil
			}
		}
		return false, nil
	})
	return last, err
}

// hasReason reports whether msg holds one of the extender's messages that contains reason.
func hasReason(msg, reason string) bool {
	i := strings.Index(msg, reasonPrefix)
	return i >= 0 && strings.Contains(msg[i:], reason)
}

// poll runs cond every pollInterval until it is true, returns an error, or timeout passes.
func (s *scenarioEnv) poll(timeout time.Duration, cond wait.ConditionWithContextFunc) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return wait.PollUntilContextCancel(ctx, pollInterval, true, cond)
}

// podEvents lists the events of this incarnation of the pod: selecting by UID keeps events of an
// earlier pod with the same name (a rerun) out.
func podEvents(ctx context.Context, pod *corev1.Pod) ([]corev1.Event, error) {
	sel := fields.Set{
		"involvedObject.kind": "Pod",
		"involvedObject.name": pod.Name,
		"involvedObject.uid":  string(pod.UID),
	}.AsSelector().String()
	list, err := client.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// cleanup prints diagnostics if the scenario failed, then deletes its pods and nodes and waits
// until they are gone, so the next scenario starts from an empty cluster.
func (s *scenarioEnv) cleanup() {
	if s.t.Failed() {
		s.dumpDiagnostics()
	}
	for _, p := range cp.Processes() {
		if p.HasExited() {
			s.t.Errorf("cannot clean up: %s exited (%v), see %s", p.Name, p.ExitErr(), p.LogPath)
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	zero := int64(0)
	del := metav1.DeleteOptions{GracePeriodSeconds: &zero}
	for _, p := range s.pods {
		if err := client.CoreV1().Pods(namespace).Delete(ctx, p, del); err != nil && !apierrors.IsNotFound(err) {
			s.t.Errorf("delete pod %s: %v", p, err)
		}
	}
	for _, n := range s.nodes {
		if err := client.CoreV1().Nodes().Delete(ctx, n, del); err != nil && !apierrors.IsNotFound(err) {
			s.t.Errorf("delete node %s: %v", n, err)
		}
	}
	sel := scenarioLabel + "=" + s.name
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return false, err
		}
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return false, err
		}
		return len(pods.Items) == 0 && len(nodes.Items) == 0, nil
	})
	if err != nil {
		s.t.Errorf("scenario %s: objects still present after cleanup: %v", s.name, err)
	}
	// The next scenario's counts start from here.
	if err := s.extenderCaughtUp(); err != nil {
		s.t.Errorf("after cleanup: %v", err)
	}
}

// dumpDiagnostics prints, for the scenario's pods (the unbound ones first, at most
// maxDumpedPods), where each is, its events, and the lines of the scheduler's and the extender's
// logs that mention it.
func (s *scenarioEnv) dumpDiagnostics() {
	const maxDumpedPods = 10
	ctx, cancel := apiContext()
	defer cancel()
	s.t.Logf("processes: %s", processStates(s.mode))
	var unbound, bound []string
	for _, name := range s.pods {
		p, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil || p.Spec.NodeName == "" {
			unbound = append(unbound, name)
		} else {
			bound = append(bound, name)
		}
	}
	dump := append(unbound, bound...)
	if len(dump) > maxDumpedPods {
		s.t.Logf("showing %d of %d pods (%d unbound)", maxDumpedPods, len(dump), len(unbound))
		dump = dump[:maxDumpedPods]
	}
	for _, name := range dump {
		s.t.Log(s.describePod(ctx, name))
	}
}

// getPod reads the pod from the API server, failing the scenario when it cannot.
func (s *scenarioEnv) getPod(name string) *corev1.Pod {
	s.t.Helper()
	ctx, cancel := apiContext()
	defer cancel()
	pod, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("get pod %s: %v", name, err)
	}
	return pod
}

func (s *scenarioEnv) describePod(ctx context.Context, name string) string {
	const maxLines = 40
	var b strings.Builder
	fmt.Fprintf(&b, "==== pod %s/%s\n", namespace, name)
	p, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		fmt.Fprintf(&b, "get: %v\n", err)
	} else {
		fmt.Fprintf(&b, "nodeName=%q annotations=%v\n", p.Spec.NodeName, p.Annotations)
		for _, c := range p.Status.Conditions {
			fmt.Fprintf(&b, "condition %s=%s reason=%s message=%q\n", c.Type, c.Status, c.Reason, c.Message)
		}
		events, err := podEvents(ctx, p)
		if err != nil {
			fmt.Fprintf(&b, "events: %v\n", err)
		}
		for _, e := range events {
			fmt.Fprintf(&b, "event %s %s x%d: %s\n", e.Type, e.Reason, e.Count, e.Message)
		}
	}
	procs := append([]*cluster.Process{s.mode.scheduler}, s.mode.extenders()...)
	for _, proc := range procs {
		all := proc.Grep(name)
		lines := all[max(0, len(all)-maxLines):]
		fmt.Fprintf(&b, "---- %s (%s): last %d of %d lines mentioning the pod\n%s\n",
			proc.Name, proc.LogPath, len(lines), len(all), strings.Join(lines, "\n"))
	}
	return b.String()
}

// deletePod deletes a pod at once (grace period 0) without waiting for anyone to notice.
func (s *scenarioEnv) deletePod(pod string) {
	s.t.Helper()
	zero := int64(0)
	ctx, cancel := apiContext()
	defer cancel()
	err := client.CoreV1().Pods(namespace).Delete(ctx, pod, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	if err != nil && !apierrors.IsNotFound(err) {
		s.t.Fatalf("delete pod %s: %v", pod, err)
	}
}

// waitPodGone waits until the pod is gone from the API server.
func (s *scenarioEnv) waitPodGone(name string) {
	s.t.Helper()
	err := s.poll(seenTimeout, func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		s.t.Fatalf("pod %s not gone: %v", name, err)
	}
}

// deletePodAndWait deletes a bound pod and waits until it is gone and both kube-scheduler and (in
// cache mode) the extender have seen it go, so the next pod sees its GPUs free everywhere.
//
// The extender's cache gauge is sampled every 2 s, so a pod created, bound and deleted between two
// samples never shows in it: a gauge equal to the API server's counts after the deletion could be
// the sample from before the pod existed. Waiting first until the gauge counts the pod makes the
// later drop a proof that the deletion was seen.
func (s *scenarioEnv) deletePodAndWait(pod string) {
	s.t.Helper()
	s.waitExtenderCaughtUp()
	s.deletePod(pod)
	s.waitPodGone(pod)
	s.waitSchedulerLog("Delete event for scheduled pod", "pod", namespace+"/"+pod)
	s.waitExtenderCaughtUp()
}

// processStates says, for each process of the run, whether it runs or how it ended; a control
// plane that died mid-scenario otherwise shows up only as "connection refused".
func processStates(env *modeEnv) string {
	var parts []string
	for _, p := range env.processes() {
		state := "running"
		if p.HasExited() {
			state = fmt.Sprintf("EXITED (%v), see %s", p.ExitErr(), p.LogPath)
		}
		parts = append(parts, p.Name+": "+state)
	}
	return strings.Join(parts, "; ")
}
