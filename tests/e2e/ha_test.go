package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// haScenarios run in the ha mode only (ha_mode_test.go). Each puts a burst of haBurst one-GPU pods
// on haNodes DGX-1V nodes (512 GPUs) and, while it is being scheduled, takes the leading replica
// away; every pod must still be bound, no GPU given twice.
var haScenarios = []scenario{
	{"failover-sigkill", func(s *scenarioEnv) { failoverDuringBurst(s, syscall.SIGKILL) }, 1, nil},
	{"failover-sigterm", func(s *scenarioEnv) { failoverDuringBurst(s, syscall.SIGTERM) }, 1, nil},
	{"rolling-upgrade", rollingUpgradeDuringBurst, 1, nil},
}

const (
	haNodes = 64
	haBurst = 500
	// haKillAfter: the leader goes once this many of the burst's pods are bound.
	haKillAfter = 100
	// haNoLeaderLimit: a failover that leaves no leader answering through the Service for this long
	// failed (the chart's lease duration is 10 s).
	haNoLeaderLimit = 60 * time.Second
)

// failoverKills is GTE_E2E_FAILOVER_KILLS (default 1): how many bursts, each with one kill, the
// failover scenarios run (make e2e-failover runs 5 for the p50 and max in docs/operations.md).
func failoverKills() int {
	if n, err := strconv.Atoi(os.Getenv("GTE_E2E_FAILOVER_KILLS")); err == nil && n > 0 {
		return n
	}
	return 1
}

// failoverDuringBurst: the leader gets sig while a burst is being scheduled; the standby takes
// over (SIGKILL: once the Lease has gone unrenewed for its duration; SIGTERM: the leader releases
// it at once), lists the pods afresh and binds the rest. The Deployment's replacement replica is
// started once the old one is gone. The time without a leader answering through the Service is
// measured from the signal to the first new connection an active leader answers.
func failoverDuringBurst(s *scenarioEnv, sig syscall.Signal) {
	s.createHANodes()
	var gaps []time.Duration
	for round := range failoverKills() {
		if round > 0 {
			s.deleteScenarioPods()
		}
		created := s.startBurst(fmt.Sprintf("r%d-", round))
		s.waitBoundCount(haKillAfter)
		leader := s.mode.ha.leader(context.Background())
		if leader == nil {
			s.t.Fatalf("round %d: no replica leads", round)
		}
		killed := time.Now()
		exited := make(chan struct{})
		go func() { leader.stop(sig, 40*time.Second); close(exited) }()
		gaps = append(gaps, s.waitLeaderAnswers(killed, leader))
		<-exited
		s.mode.ha.remove(leader)
		s.followLeader()
		if _, err := s.mode.ha.start(context.Background()); err != nil {
			s.t.Fatalf("replacement replica: %v", err)
		}
		s.finishBurst(created)
	}
	s.reportGaps(signalName(sig), gaps)
}

// rollingUpgradeDuringBurst: what the standalone Deployment's RollingUpdate (maxSurge 1,
// maxUnavailable 0) does to the replicas during a burst: a new replica, once ready, lets the old
// leader be terminated (SIGTERM, drain); a second new one replaces the old standby.
func rollingUpgradeDuringBurst(s *scenarioEnv) {
	s.createHANodes()
	created := s.startBurst("u-")
	s.waitBoundCount(haKillAfter)
	old := s.mode.ha.replicas()
	leader := s.mode.ha.leader(context.Background())
	slices.SortFunc(old, func(a, b *haReplica) int { // the leader first: the worse order
		if a == leader {
			return -1
		}
		if b == leader {
			return 1
		}
		return 0
	})
	var gaps []time.Duration
	for _, r := range old {
		if _, err := s.mode.ha.start(context.Background()); err != nil {
			s.t.Fatalf("new replica: %v", err)
		}
		stopped := time.Now()
		exited := make(chan struct{})
		go func() { r.stop(syscall.SIGTERM, 40*time.Second); close(exited) }()
		if r == leader {
			gaps = append(gaps, s.waitLeaderAnswers(stopped, r))
		}
		<-exited
		s.mode.ha.remove(r)
		s.followLeader()
	}
	s.finishBurst(created)
	s.reportGaps("rolling upgrade", gaps)
}

// followLeader points the sidecar mode at the pod leading now (its kube-scheduler's log is what
// createNodes waits on, its extender's cache what extenderCaughtUp compares); a no-op standalone.
func (s *scenarioEnv) followLeader() {
	s.t.Helper()
	if !s.mode.mode.haSidecar {
		return
	}
	if err := s.mode.ha.waitSidecarLeader(context.Background(), s.mode); err != nil {
		s.t.Fatal(err)
	}
}

// createHANodes creates the haNodes DGX-1V nodes (8 GPUs each) the bursts fill.
func (s *scenarioEnv) createHANodes() {
	s.t.Helper()
	var specs []nodeSpec
	for i := range haNodes {
		specs = append(specs, nodeSpec{name: fmt.Sprintf("n%02d", i), capture: dgx1V})
	}
	s.createNodes(specs...)
}

// startBurst creates haBurst pods named PREFIXnn on a goroutine; the channel yields the creations
// that failed.
func (s *scenarioEnv) startBurst(prefix string) <-chan []error {
	names := s.burstNames(prefix, haBurst)
	out := make(chan []error, 1)
	go func() { out <- s.createOneGPUPods(names, 20) }()
	return out
}

// finishBurst waits for the burst's creations, then for every pod to be bound, and checks that no
// GPU went to two pods (by the extender's gpus annotation, which the new leader's reservations
// must have respected).
func (s *scenarioEnv) finishBurst(created <-chan []error) {
	s.t.Helper()
	for _, err := range <-created {
		s.t.Error(err)
	}
	if s.t.Failed() {
		s.t.FailNow()
	}
	s.checkNoGPUGivenTwice(s.waitAllBound(5 * time.Minute))
}

// waitBoundCount waits until at least n of the scenario's pods are bound.
func (s *scenarioEnv) waitBoundCount(n int) {
	s.t.Helper()
	bound := 0
	err := s.poll(bindTimeout, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: scenarioLabel + "=" + s.name})
		if err != nil {
			return false, err
		}
		bound = 0
		for _, p := range list.Items {
			if p.Spec.NodeName != "" {
				bound++
			}
		}
		return bound >= n, nil
	})
	if err != nil {
		s.t.Fatalf("only %d pods bound, want %d before taking the leader away: %v", bound, n, err)
	}
}

// waitLeaderAnswers probes every 25 ms with a bind on a new connection where a kube-scheduler
// connecting now would go (haReplicas.answered), until a replica other than gone answers it as
// the active leader (answersBinds). It returns the longest stretch without an answer from since on: from
// since (or the last answered probe) to the next answered one. The old leader may still answer
// for a moment after its signal; that counts as answered.
func (s *scenarioEnv) waitLeaderAnswers(since time.Time, gone *haReplica) time.Duration {
	s.t.Helper()
	lastAnswered := since
	var longest time.Duration
	for time.Since(since) < haNoLeaderLimit {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		ok, other := s.mode.ha.answered(ctx, gone)
		cancel()
		if ok {
			now := time.Now()
			longest = max(longest, now.Sub(lastAnswered))
			lastAnswered = now
			if other {
				return longest
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	s.t.Fatalf("no other replica answered as the leader through the Service within %s", haNoLeaderLimit)
	return 0
}

// deleteScenarioPods deletes the scenario's pods and waits until they are gone and the leader's
// cache has caught up, so the next burst starts from free GPUs.
func (s *scenarioEnv) deleteScenarioPods() {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	zero := int64(0)
	sel := metav1.ListOptions{LabelSelector: scenarioLabel + "=" + s.name}
	if err := client.CoreV1().Pods(namespace).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, sel); err != nil {
		s.t.Fatalf("delete pods: %v", err)
	}
	err := s.poll(2*time.Minute, func(ctx context.Context) (bool, error) {
		list, err := client.CoreV1().Pods(namespace).List(ctx, sel)
		return err == nil && len(list.Items) == 0, err
	})
	if err != nil {
		s.t.Fatalf("pods not gone: %v", err)
	}
	s.pods = nil
	s.waitExtenderCaughtUp()
}

// reportGaps logs the times without a leader, their median and maximum, and appends them to
// GTE_E2E_FAILOVER_OUT.
func (s *scenarioEnv) reportGaps(what string, gaps []time.Duration) {
	if len(gaps) == 0 {
		return
	}
	sorted := slices.Clone(gaps)
	slices.Sort(sorted)
	var each []string
	for _, g := range gaps {
		each = append(each, g.Round(10*time.Millisecond).String())
	}
	line := fmt.Sprintf("failover %s, %s: %d kill(s) during %d-pod bursts, time without an answering leader: p50 %s, max %s (each: %s)",
		s.mode.mode.name, what, len(gaps), haBurst, sorted[len(sorted)/2].Round(10*time.Millisecond),
		sorted[len(sorted)-1].Round(10*time.Millisecond), strings.Join(each, " "))
	s.t.Log(line)
	fmt.Println("e2e: " + line)
	writeFailoverFigures(line)
}

func signalName(sig syscall.Signal) string {
	if sig == syscall.SIGKILL {
		return "SIGKILL"
	}
	return "SIGTERM"
}
