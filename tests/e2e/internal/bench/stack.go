package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"gpu-topology-extender/tests/e2e/internal/cluster"
	"gpu-topology-extender/tests/e2e/internal/promtext"
)

// extenderWeight and managedResources are those of the e2e suite's cache mode.
const extenderWeight = 12

var managedResources = []string{"nvidia.com/gpu"}

// cacheGauge is the extender's gauge of its cache sizes (docs/operations.md, "Metrics").
const cacheGauge = "gpu_topology_extender_cache_objects"

// stack is one kube-scheduler and, for the extender configurations, the extender it calls.
type stack struct {
	config     Configuration
	scheduler  *cluster.Process
	extender   *cluster.Process // nil for kube-scheduler alone
	metricsURL string
}

func (b *bench) startStack(ctx context.Context, dir string, rate cluster.ClientRate, c Configuration) (*stack, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	s := &stack{config: c}
	var ext *cluster.Extender
	if c.Extender {
		p, prefix, err := cluster.StartExtender(ctx, dir, cluster.ExtenderOptions{
			Binary: b.o.Extender, Policy: b.o.Policy, Kubeconfig: b.o.Kubeconfig,
		})
		if err != nil {
			return nil, err
		}
		s.extender = p
		s.metricsURL = strings.TrimSuffix(prefix, "/scheduler") + "/metrics"
		ext = &cluster.Extender{
			URLPrefix: prefix, NodeCacheCapable: true, Bind: c.Bind, Weight: extenderWeight,
			ManagedResources: managedResources, HTTPTimeout: b.o.HTTPTimeout,
		}
		// kube-scheduler would otherwise ask an extender that has not listed the nodes yet.
		if err := b.waitExtenderCaughtUp(ctx, s); err != nil {
			s.stop()
			return nil, err
		}
	}
	sched, err := cluster.StartScheduler(ctx, b.o.BinDir, dir, dir,
		cluster.SchedulerConfigWith(b.o.Kubeconfig, rate, ext))
	if err != nil {
		s.stop()
		return nil, err
	}
	s.scheduler = sched
	if err := b.waitSchedulerSawNodes(ctx, s); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

func (s *stack) stop() {
	for _, p := range []*cluster.Process{s.scheduler, s.extender} {
		if p != nil {
			p.Stop(10 * time.Second)
		}
	}
}

// waitSchedulerSawNodes waits until kube-scheduler (at --v=3) has logged an add event for every
// benchmark node: a burst created earlier would be placed among the nodes seen so far.
func (b *bench) waitSchedulerSawNodes(ctx context.Context, s *stack) error {
	var seen int
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
		if s.scheduler.HasExited() {
			return false, fmt.Errorf("kube-scheduler exited (%v), see %s", s.scheduler.ExitErr(), s.scheduler.LogPath)
		}
		seen = countContaining(s.scheduler.Grep("Add event for node"), `node="`+nodePrefix)
		return seen >= b.o.Nodes, nil
	})
	if err != nil {
		return fmt.Errorf("kube-scheduler saw %d of %d nodes: %w", seen, b.o.Nodes, err)
	}
	return nil
}

// waitExtenderCaughtUp waits until the extender's cache holds every node and non-terminal pod the
// API server has and no reservation is pending.
func (b *bench) waitExtenderCaughtUp(ctx context.Context, s *stack) error {
	if s.extender == nil {
		return nil
	}
	var last string
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if s.extender.HasExited() {
			return false, fmt.Errorf("extender exited (%v), see %s", s.extender.ExitErr(), s.extender.LogPath)
		}
		nodes, pods, err := b.apiCounts(ctx)
		if err != nil {
			return false, err
		}
		m, err := promtext.Scrape(ctx, s.metricsURL)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		got := [3]int{
			int(m.Value(cacheGauge, map[string]string{"kind": "node"})),
			int(m.Value(cacheGauge, map[string]string{"kind": "pod"})),
			int(m.Value(cacheGauge, map[string]string{"kind": "reservation"})),
		}
		last = fmt.Sprintf("extender cache {nodes, pods, reservations} %v, API server %d nodes, %d pods", got, nodes, pods)
		return got == [3]int{nodes, pods, 0}, nil
	})
	if err != nil {
		return fmt.Errorf("extender cache did not catch up (last: %s): %w", last, err)
	}
	return nil
}

func countContaining(lines []string, sub string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}
