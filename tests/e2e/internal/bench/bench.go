// Package bench measures scheduling throughput end to end: a real kube-scheduler and
// kube-apiserver, many fake GPU nodes, bursts of one-GPU pods, and kube-scheduler alone compared
// with kube-scheduler calling the extender in cache mode, with and without delegating the bind.
//
// It is a benchmark, not a test: it reports figures (pods/s, the extender's bind latency,
// kube-scheduler's bind timeouts, stale binds, GPUs given twice) and asserts nothing about time.
// cmd/bench-e2e runs it from `make bench-e2e`; the e2e suite runs a tiny configuration of it so the
// code keeps working (bench_smoke_test.go).
package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"gpu-topology-extender/tests/e2e/internal/chartrun"
	"gpu-topology-extender/tests/e2e/internal/cluster"
)

// Configuration is one way of running kube-scheduler.
type Configuration struct {
	Name string
	// Extender: kube-scheduler calls the extender in cache mode (nodeCacheCapable: true, the
	// extender watches the cluster through --kubeconfig). Otherwise kube-scheduler runs alone.
	Extender bool
	// Bind: the extender binds (bindVerb: bind), as the Helm chart renders it.
	Bind bool
	// Sidecar: the chart's default high-availability shape: kube-scheduler leader-elected on a
	// Lease, its extender following that Lease (--follow-lease, binding only while kube-scheduler
	// holds it) and a second, standby extender following it too under another identity (the warm
	// sidecar of a standby kube-scheduler pod, which is not run: it would only idle).
	Sidecar bool
}

// Configurations are the ones the benchmark knows, by the name its -configs flag takes.
var Configurations = []Configuration{
	{Name: "alone"},
	{Name: "extender", Extender: true},
	{Name: "extender-bind", Extender: true, Bind: true},
	{Name: "extender-ha", Extender: true, Bind: true, Sidecar: true},
}

// ConfigurationByName looks a configuration up by name.
func ConfigurationByName(name string) (Configuration, error) {
	for _, c := range Configurations {
		if c.Name == name {
			return c, nil
		}
	}
	return Configuration{}, fmt.Errorf("unknown configuration %q (known: alone, extender, extender-bind, extender-ha)", name)
}

// Options steer one benchmark.
type Options struct {
	Kubeconfig string // the API server's admin kubeconfig
	BinDir     string // kube-scheduler
	Extender   string // the extender binary
	Policy     string // its policy file
	Topologies string // directory of nvidia-smi topo -m captures for the fake nodes
	LogDir     string // every process of every run logs under here
	Namespace  string // must exist; pods are created here
	// Leases are the chart's default lease timings (extender-ha: kube-scheduler's lease and its
	// extender's flags, as the chart renders them).
	Leases chartrun.LeaseDefaults

	Nodes          int
	Bursts         []int // pods per burst, run one after the other on each kube-scheduler
	Configurations []Configuration
	// Rates are kube-scheduler's client rates to try; a zero rate keeps its defaults.
	Rates []cluster.ClientRate
	Runs  int
	// HTTPTimeout is kube-scheduler's httpTimeout towards the extender (the chart's default is 3 s).
	HTTPTimeout time.Duration
	// BurstTimeout bounds the wait for one burst to be bound.
	BurstTimeout time.Duration
	// ControlPlane are kube-apiserver and etcd, whose CPU time each burst reports; may be empty.
	ControlPlane []*cluster.Process
	// Progress gets one line per step; nil is quiet.
	Progress io.Writer
}

// Run creates the nodes, measures every (run, rate, configuration, burst), deletes what it created
// and returns one Result per burst. Runs are interleaved (run 1 of every configuration, then run
// 2) so that a noisy neighbour on the machine spreads over the configurations instead of hitting
// one.
func Run(ctx context.Context, o Options) ([]Result, error) {
	client, err := fastClient(o.Kubeconfig)
	if err != nil {
		return nil, err
	}
	b := &bench{o: o, client: client, nodeGPUs: map[string]int64{}}
	b.logf("creating %d nodes", o.Nodes)
	if err := b.createNodes(ctx); err != nil {
		return nil, err
	}
	defer b.deleteNodes()

	var out []Result
	for run := 1; run <= o.Runs; run++ {
		for _, rate := range o.Rates {
			for _, c := range o.Configurations {
				results, err := b.measure(ctx, run, rate, c)
				out = append(out, results...)
				if err != nil {
					return out, err
				}
			}
		}
	}
	return out, nil
}

// bench holds what every measurement shares.
type bench struct {
	o      Options
	client kubernetes.Interface
	bursts int // bursts created so far, to name each one's pods uniquely
	// nodeGPUs is each benchmark node's allocatable nvidia.com/gpu, written by createNodes.
	nodeGPUs map[string]int64
}

func (b *bench) logf(format string, args ...any) {
	if b.o.Progress != nil {
		fmt.Fprintf(b.o.Progress, "bench-e2e: "+format+"\n", args...)
	}
}

// measure starts one kube-scheduler (and extender) for the configuration and runs every burst
// against it.
func (b *bench) measure(ctx context.Context, run int, rate cluster.ClientRate, c Configuration) ([]Result, error) {
	dir := filepath.Join(b.o.LogDir, fmt.Sprintf("run%d-qps%d-%s", run, rate.QPS, c.Name))
	b.logf("run %d, %s, client rate %s: starting (logs in %s)", run, c.Name, rateString(rate), dir)
	s, err := b.startStack(ctx, dir, rate, c)
	if err != nil {
		return nil, fmt.Errorf("run %d, %s: %w", run, c.Name, err)
	}
	defer s.stop()
	var out []Result
	for _, n := range b.o.Bursts {
		r, err := b.burst(ctx, s, n)
		r.Run, r.Configuration, r.Rate = run, c.Name, rate
		out = append(out, r)
		if err != nil {
			return out, fmt.Errorf("run %d, %s, burst %d: %w", run, c.Name, n, err)
		}
		b.logf("%s", r.Line())
		if err := b.deleteBurst(ctx, s, r.label); err != nil {
			return out, err
		}
	}
	return out, nil
}

// fastClient is the harness's own client: fast enough that creating a burst does not wait on
// client-side rate limiting (the default 5 QPS would spread 1,500 pods over five minutes).
func fastClient(kubeconfig string) (kubernetes.Interface, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	rc.QPS, rc.Burst = 5000, 5000
	rc.Timeout = 60 * time.Second
	return kubernetes.NewForConfig(rc)
}

func rateString(r cluster.ClientRate) string {
	if r.QPS == 0 {
		return "default (50/s)"
	}
	return fmt.Sprintf("%d/s", r.QPS)
}
