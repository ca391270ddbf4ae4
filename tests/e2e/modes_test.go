package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"gpu-topology-extender/tests/e2e/internal/cluster"
)

// mode is one way of wiring the extender to kube-scheduler.
type mode struct {
	name string
	// cache: the extender gets --kubeconfig, watches nodes and pods itself, and binds
	// (nodeCacheCapable: true, bindVerb: bind). Otherwise it decides from the Node objects in each
	// request (nodeCacheCapable: false) and kube-scheduler's DefaultBinder binds.
	cache bool
	// chart: the chart as it runs (chart_mode_test.go): the extender, kube-scheduler and the
	// agent run with the arguments, ConfigMaps and ServiceAccount identities the Helm chart
	// renders, and pods use the chart's schedulerName. The extender watches and binds, as in cache.
	chart bool
	// chartSet are helm arguments the chart-identity modes render with (the layout).
	chartSet []string
	// ha: the chart's standalone layout, two leader-elected replicas behind a Service that follows
	// the leader's EndpointSlice (ha_mode_test.go); runs haScenarios instead of scenarios.
	ha bool
	// haSidecar: ha in the chart's default layout instead: two kube-scheduler pods, leader-elected,
	// each with its extender following the lease (ha_mode_test.go).
	haSidecar bool
}

var modesByName = map[string]mode{
	"nodes":          {name: "nodes"},
	"cache":          {name: "cache", cache: true},
	"chart-identity": {name: "chart-identity", cache: true, chart: true},
	// The chart's standalone layout: the extender's own Deployment, leader-elected, published in the
	// Service's EndpointSlice (its Role's leases and endpointslices grants in use).
	"chart-identity-standalone": {name: "chart-identity-standalone", cache: true, chart: true,
		chartSet: []string{"--set", "layout=standalone"}},
	"ha":         {name: "ha", cache: true, ha: true},
	"ha-sidecar": {name: "ha-sidecar", cache: true, ha: true, haSidecar: true},
}

// extenderWeight makes the extender's score dominate the in-tree plugins': kube-scheduler adds
// score x weight x 10 per extender, and the default in-tree plugins sum to about 1200 at most, so
// about 12 is the crossover.
const extenderWeight = 12

// managedResources are the resources that make kube-scheduler call the extender for a pod. The MIG
// names cover the A100-80GB profiles the MIG scenario uses.
var managedResources = []string{
	"nvidia.com/gpu",
	"nvidia.com/mig-1g.10gb",
	"nvidia.com/mig-2g.20gb",
	"nvidia.com/mig-3g.40gb",
	"nvidia.com/mig-4g.40gb",
	"nvidia.com/mig-7g.80gb",
}

// modeManagedResources: in cache mode the extender runs with --dra, and as the chart's
// extender.dra renders it, the scheduler lists no managedResources, so pods that ask for GPUs only
// through ResourceClaims reach it too (dra_test.go); every pod is then sent.
func modeManagedResources(m mode, extender bool) []string {
	if m.cache && extender {
		return nil
	}
	return managedResources
}

// modeEnv is the extender and scheduler of one mode.
type modeEnv struct {
	mode mode
	// extender is the extender under test; nil in control mode, where noop answers instead.
	extender *cluster.Process
	noop     *noopExtender
	// metricsURL is the extender's GET /metrics; empty in control mode.
	metricsURL string
	// verbsURL is the extender's verb prefix (POST verbsURL+"/bind"); empty in control mode.
	verbsURL  string
	scheduler *cluster.Process
	// schedulerName is what the mode's pods set in spec.schedulerName.
	schedulerName string
	// chart is the applied chart release (chart-identity mode only).
	chart *chartRun
	// ha are the extender replicas (ha modes only; extender is nil there, the replicas change
	// during its scenarios).
	ha *haReplicas
	// listed are the names of every scenario, in order; ran holds those started so far in this mode.
	listed []string
	ran    map[string]bool
}

// scenariosNotRunBefore lists the scenarios listed before the named one that did not run in this
// mode (a -run filter left them out).
func (m *modeEnv) scenariosNotRunBefore(name string) []string {
	var out []string
	for _, sc := range m.listed {
		if sc == name {
			break
		}
		if !m.ran[sc] {
			out = append(out, sc)
		}
	}
	return out
}

// processes lists the child processes a scenario depends on: the extender under test (none in
// control mode), kube-scheduler and the control plane.
func (m *modeEnv) processes() []*cluster.Process {
	return append(append(m.extenders(), m.scheduler), cp.Processes()...)
}

// extenders are the extender processes running now: the one under test, or the ha mode's replicas.
func (m *modeEnv) extenders() []*cluster.Process {
	if m.ha != nil {
		return m.ha.processes()
	}
	if m.extender != nil {
		return []*cluster.Process{m.extender}
	}
	return nil
}

// watchesCluster reports whether the mode's extender keeps its own cache of nodes and pods, which
// the scenarios must then wait on before asking it anything.
func (m *modeEnv) watchesCluster() bool {
	return m.mode.cache && (m.extender != nil || m.ha != nil)
}

// startMode starts the extender and a kube-scheduler that calls it; both are stopped when t ends.
func startMode(t *testing.T, m mode) (*modeEnv, error) {
	dir := filepath.Join(logDir, m.name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	env := &modeEnv{mode: m, ran: map[string]bool{}}
	env.schedulerName = corev1.DefaultSchedulerName
	if m.chart {
		if cfg.control != "" {
			return nil, fmt.Errorf("the control replaces the extender, which this mode runs as the chart renders it")
		}
		return env, startChartIdentity(ctx, t, env, dir)
	}
	if m.ha {
		if cfg.control != "" {
			return nil, fmt.Errorf("the control replaces the extender, whose replicas this mode runs")
		}
		return env, startHAMode(ctx, t, env, dir)
	}
	var prefix string
	if cfg.control == "noop" {
		noop, p, err := startNoopExtender()
		if err != nil {
			return nil, err
		}
		t.Cleanup(noop.Stop)
		env.noop, prefix = noop, p
	} else {
		opts := cluster.ExtenderOptions{Binary: cfg.extender, Policy: cfg.policy}
		if m.cache {
			opts.Kubeconfig = cp.Kubeconfig
			opts.DRA = true
		}
		ext, p, err := cluster.StartExtender(ctx, dir, opts)
		if err != nil {
			return nil, err
		}
		t.Cleanup(func() { ext.Stop(10 * time.Second) })
		env.extender, prefix = ext, p
		env.metricsURL = strings.TrimSuffix(p, "/scheduler") + "/metrics"
		env.verbsURL = p
	}

	schedCfg := cluster.SchedulerConfig(cp.Kubeconfig, cluster.Extender{
		URLPrefix:        prefix,
		NodeCacheCapable: m.cache,
		// The control cannot bind; kube-scheduler's DefaultBinder does.
		Bind: m.cache && env.extender != nil,
		// The control answers filter and prioritize only.
		Preempt:          env.extender != nil,
		Weight:           extenderWeight,
		ManagedResources: modeManagedResources(m, env.extender != nil),
	})
	sched, err := cluster.StartScheduler(ctx, cfg.binDir, dir, dir, schedCfg)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { sched.Stop(10 * time.Second) })
	env.scheduler = sched
	return env, nil
}
