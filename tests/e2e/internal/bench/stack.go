package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"gpu-topology-extender/tests/e2e/internal/chartrun"
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
	// standby is the warm extender of the sidecar shape (nil otherwise), standbyMetricsURL its.
	standby           *cluster.Process
	standbyMetricsURL string
}

// sidecarLease is the lease kube-scheduler holds in the sidecar shape.
func (b *bench) sidecarLease() *cluster.Lease {
	l := b.o.Leases.Scheduler
	return &cluster.Lease{Namespace: b.o.Namespace, Name: "gte-bench-scheduler", LeaseDuration: l.LeaseDuration,
		RenewDeadline: l.RenewDeadline, RetryPeriod: l.RetryPeriod}
}

// followLease are the sidecar extender's flags as the chart renders them: follow kube-scheduler's
// lease, stop binding at its renew deadline. identity "" is the host name, which kube-scheduler's
// holder identity starts with.
func (b *bench) followLease(identity string) []string {
	l := b.sidecarLease()
	args := []string{"--follow-lease=" + l.Namespace + "/" + l.Name,
		"--leader-elect-renew-deadline=" + chartrun.Flag(l.RenewDeadline),
		"--leader-elect-retry-period=" + chartrun.Flag(b.o.Leases.Extender.RetryPeriod)}
	if identity != "" {
		args = append(args, "--leader-elect-identity="+identity)
	}
	return args
}

func (b *bench) startStack(ctx context.Context, dir string, rate cluster.ClientRate, c Configuration) (*stack, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	s := &stack{config: c}
	var ext *cluster.Extender
	var lease *cluster.Lease
	if c.Extender {
		opts := cluster.ExtenderOptions{Binary: b.o.Extender, Policy: b.o.Policy, Kubeconfig: b.o.Kubeconfig}
		if c.Sidecar {
			lease = b.sidecarLease()
			standby := opts
			standby.Name, standby.Args = "extender-standby", b.followLease("standby-pod")
			p, prefix, err := cluster.StartExtender(ctx, dir, standby)
			if err != nil {
				return nil, err
			}
			s.standby = p
			s.standbyMetricsURL = strings.TrimSuffix(prefix, "/scheduler") + "/metrics"
			opts.Args = b.followLease("")
		}
		p, prefix, err := cluster.StartExtender(ctx, dir, opts)
		if err != nil {
			s.stop()
			return nil, err
		}
		s.extender = p
		s.metricsURL = strings.TrimSuffix(prefix, "/scheduler") + "/metrics"
		ext = &cluster.Extender{
			URLPrefix: prefix, NodeCacheCapable: true, Bind: c.Bind, Weight: extenderWeight,
			ManagedResources: managedResources, HTTPTimeout: b.o.HTTPTimeout,
		}
		// kube-scheduler would otherwise ask an extender that has not listed the nodes yet.
		if err := b.waitExtendersCaughtUp(ctx, s); err != nil {
			s.stop()
			return nil, err
		}
	}
	sched, err := cluster.StartScheduler(ctx, b.o.BinDir, dir, dir,
		cluster.SchedulerConfigLeased(b.o.Kubeconfig, rate, ext, lease))
	if err != nil {
		s.stop()
		return nil, err
	}
	s.scheduler = sched
	if err := b.waitSchedulerSawNodes(ctx, s); err != nil {
		s.stop()
		return nil, err
	}
	if c.Sidecar {
		if err := waitLeading(ctx, s); err != nil {
			s.stop()
			return nil, err
		}
	}
	return s, nil
}

// waitLeading waits until the sidecar extender binds: it has seen its kube-scheduler win the
// lease and taken over (gpu_topology_extender_leader 1). A deployed pair is past this point; a
// burst started earlier would time kube-scheduler's first lease renew.
func waitLeading(ctx context.Context, s *stack) error {
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		m, err := promtext.Scrape(ctx, s.metricsURL)
		return err == nil && m.Value("gpu_topology_extender_leader", nil) == 1, nil
	})
	if err != nil {
		return fmt.Errorf("the sidecar extender never led (see %s): %w", s.extender.LogPath, err)
	}
	return nil
}

func (s *stack) stop() {
	for _, p := range []*cluster.Process{s.scheduler, s.extender, s.standby} {
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

// waitExtendersCaughtUp waits until the stack's extenders (none, one, or the active and the standby)
// have caught up (waitExtenderCaughtUp).
func (b *bench) waitExtendersCaughtUp(ctx context.Context, s *stack) error {
	for _, e := range []struct {
		proc *cluster.Process
		url  string
	}{{s.extender, s.metricsURL}, {s.standby, s.standbyMetricsURL}} {
		if e.proc == nil {
			continue
		}
		if err := b.waitExtenderCaughtUp(ctx, e.proc, e.url); err != nil {
			return err
		}
	}
	return nil
}

// waitExtenderCaughtUp waits until the extender's cache holds every node and non-terminal pod the
// API server has and no reservation is pending.
func (b *bench) waitExtenderCaughtUp(ctx context.Context, ext *cluster.Process, metricsURL string) error {
	var last string
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if ext.HasExited() {
			return false, fmt.Errorf("%s exited (%v), see %s", ext.Name, ext.ExitErr(), ext.LogPath)
		}
		nodes, pods, err := b.apiCounts(ctx)
		if err != nil {
			return false, err
		}
		m, err := promtext.Scrape(ctx, metricsURL)
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
