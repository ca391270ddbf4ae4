// Command bench-e2e measures scheduling throughput behind a real kube-scheduler and kube-apiserver:
// fake GPU nodes, bursts of one-GPU pods, kube-scheduler alone against kube-scheduler with the
// extender in cache mode, with and without the extender binding. `make bench-e2e` runs it; the
// figures and the command are in docs/performance.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"gpu-topology-extender/tests/e2e/internal/bench"
	"gpu-topology-extender/tests/e2e/internal/chartrun"
	"gpu-topology-extender/tests/e2e/internal/cluster"
)

func main() {
	os.Exit(run())
}

func run() int {
	root := repoRoot()
	var (
		nodes       = flag.Int("nodes", 1000, "fake 8-GPU nodes")
		bursts      = flag.String("bursts", "500,1500", "pods per burst, comma-separated, run in this order")
		configs     = flag.String("configs", "alone,extender,extender-bind", "configurations: alone, extender (cache mode, kube-scheduler binds), extender-bind (cache mode, bindVerb), extender-ha (extender-bind in the chart's sidecar shape: leader-elected kube-scheduler, its extender following the lease, a warm standby extender)")
		rates       = flag.String("client-qps", "0,500", "kube-scheduler clientConnection.qps values (burst = 2 x qps); 0 keeps its defaults (qps 50, burst 100)")
		runs        = flag.Int("runs", 2, "runs of everything; the table shows medians")
		httpTimeout = flag.Duration("http-timeout", 3*time.Second, "kube-scheduler's httpTimeout towards the extender (the chart's default)")
		burstWait   = flag.Duration("burst-timeout", 10*time.Minute, "longest wait for one burst to be bound")
		binDir      = flag.String("bin-dir", envOr("E2E_BIN_DIR", filepath.Join(root, "build", "e2e-bin")), "etcd, kube-apiserver, kube-scheduler (E2E_BIN_DIR)")
		extender    = flag.String("extender", envOr("GTE_BINARY", filepath.Join(root, "build", "bin", "gpu-topology-extender")), "extender binary (GTE_BINARY)")
		policy      = flag.String("policy", envOr("GTE_POLICY", filepath.Join(root, "config", "scheduler-policy.yaml")), "extender policy (GTE_POLICY)")
		keepLogs    = flag.Bool("keep-logs", false, "keep the log directory (it is kept anyway when something fails)")
	)
	flag.Parse()

	for _, p := range []*string{binDir, extender, policy} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return fail(err)
		}
		*p = abs
	}
	o := bench.Options{
		BinDir: *binDir, Extender: *extender, Policy: *policy,
		Topologies: filepath.Join(root, "tests", "data", "topologies"),
		Namespace:  "gte-bench", Nodes: *nodes, Runs: *runs,
		HTTPTimeout: *httpTimeout, BurstTimeout: *burstWait, Progress: os.Stdout,
	}
	var err error
	if o.Leases, err = chartrun.ReadLeaseDefaults(filepath.Join(root, "charts", "gpu-topology-extender")); err != nil {
		return fail(err)
	}
	if o.Bursts, err = parseInts(*bursts); err != nil {
		return fail(err)
	}
	for _, name := range strings.Split(*configs, ",") {
		c, err := bench.ConfigurationByName(strings.TrimSpace(name))
		if err != nil {
			return fail(err)
		}
		o.Configurations = append(o.Configurations, c)
	}
	if o.Rates, err = bench.ParseRates(*rates); err != nil {
		return fail(err)
	}
	if o.LogDir, err = os.MkdirTemp("", "gte-bench-e2e-"); err != nil {
		return fail(err)
	}
	fmt.Printf("bench-e2e: logs in %s\n", o.LogDir)

	results, err := withControlPlane(&o)
	fmt.Printf("\n%d nodes, bursts %s, kube-scheduler httpTimeout %s, %d run(s):\n\n", o.Nodes, *bursts, o.HTTPTimeout, o.Runs)
	bench.WriteTable(os.Stdout, results)
	if err != nil {
		fmt.Printf("bench-e2e: logs kept in %s\n", o.LogDir)
		return fail(err)
	}
	if *keepLogs {
		fmt.Printf("bench-e2e: logs kept in %s\n", o.LogDir)
	} else {
		os.RemoveAll(o.LogDir)
	}
	return 0
}

// withControlPlane starts etcd and kube-apiserver, runs the benchmark and stops everything, also
// on SIGINT/SIGTERM.
func withControlPlane(o *bench.Options) ([]bench.Result, error) {
	defer cluster.StopAll()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "bench-e2e: %v: stopping all processes\n", s)
		cluster.StopAll()
		os.Exit(130)
	}()
	ctx := context.Background()
	cp, err := cluster.StartControlPlane(ctx, o.BinDir, filepath.Join(o.LogDir, "work"), o.LogDir)
	if err != nil {
		return nil, fmt.Errorf("control plane: %w", err)
	}
	o.Kubeconfig, o.ControlPlane = cp.Kubeconfig, cp.Processes()
	if err := createNamespace(ctx, o.Kubeconfig, o.Namespace); err != nil {
		return nil, err
	}
	return bench.Run(ctx, *o)
}

func createNamespace(ctx context.Context, kubeconfig, name string) error {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	_, err = client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{})
	return err
}

func parseInts(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("%q: want a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// repoRoot is two levels above tests/e2e, where `go run ./cmd/bench-e2e` runs.
func repoRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func fail(err error) int {
	fmt.Fprintln(os.Stderr, "bench-e2e:", err)
	return 1
}
