package e2e

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gpu-topology-extender/tests/e2e/internal/bench"
	"gpu-topology-extender/tests/e2e/internal/cluster"
)

// TestBenchE2ESmoke runs the end-to-end benchmark (`make bench-e2e`, internal/bench) at toy size,
// 20 nodes and one burst of 30 pods with the extender binding, so its code keeps working between
// the occasions someone measures with it. It asserts what the benchmark's figures rest on (every
// pod bound, a bind latency read from the extender's metrics, no GPU given twice), never a time.
func TestBenchE2ESmoke(t *testing.T) {
	if cfg.control != "" {
		t.Skip("control mode: the benchmark measures the extender under test")
	}
	bindConfig, err := bench.ConfigurationByName("extender-bind")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	results, err := bench.Run(ctx, bench.Options{
		Kubeconfig: cp.Kubeconfig, ControlPlane: cp.Processes(),
		BinDir: cfg.binDir, Extender: cfg.extender, Policy: cfg.policy,
		Topologies: cfg.topologies, LogDir: filepath.Join(logDir, "bench-smoke"), Namespace: namespace,
		Nodes: 20, Bursts: []int{30}, Configurations: []bench.Configuration{bindConfig},
		Rates: []cluster.ClientRate{{}}, Runs: 1,
		HTTPTimeout: 10 * time.Second, BurstTimeout: 3 * time.Minute,
	})
	for _, r := range results {
		t.Log(r.Line())
	}
	if err != nil {
		t.Fatalf("benchmark: %v (logs in %s)", err, filepath.Join(logDir, "bench-smoke"))
	}
	if len(results) != 1 {
		t.Fatalf("%d results, want one burst", len(results))
	}
	r := results[0]
	if r.Bound != 30 || r.PodsPerSec <= 0 {
		t.Errorf("%d of 30 pods bound, %.1f pods/s", r.Bound, r.PodsPerSec)
	}
	if r.BindCalls < 30 || math.IsNaN(r.BindP50) || math.IsNaN(r.BindP99) || r.BindP99 < r.BindP50 {
		t.Errorf("bind figures from the extender's metrics: %d calls, p50 %v s, p99 %v s", r.BindCalls, r.BindP50, r.BindP99)
	}
	for _, c := range r.CPU {
		if math.IsNaN(c.Seconds) || c.Seconds < 0 {
			t.Errorf("CPU seconds of %s during the burst: %v", c.Name, c.Seconds)
		}
	}
	if len(r.CPU) != 4 {
		t.Errorf("CPU figures for %d processes, want kube-scheduler, extender, kube-apiserver, etcd", len(r.CPU))
	}
	if r.GPUsTwice != 0 {
		t.Errorf("%d GPUs given twice", r.GPUsTwice)
	}
	var table bytes.Buffer
	bench.WriteTable(&table, results)
	if !strings.Contains(table.String(), "| extender-bind | 30 | default (50/s) | 1 |") {
		t.Errorf("table lacks the burst's row:\n%s", table.String())
	}
}
