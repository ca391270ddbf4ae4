package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"gpu-topology-extender/tests/e2e/internal/cluster"
)

// The table is what gets copied into docs/performance.md: each row must compare a configuration
// with kube-scheduler alone at the same burst and client rate, take medians over runs, keep the
// worst run's defects, and say when a run did not bind every pod.
func TestWriteTableComparesWithAloneAtTheSameBurstAndRate(t *testing.T) {
	nan := math.NaN()
	fast := cluster.ClientRate{QPS: 500, Burst: 1000}
	rs := []Result{
		{Run: 1, Configuration: "alone", Burst: 500, Bound: 500, PodsPerSec: 40, BindP50: nan, BindP99: nan, FilterP50: nan, PrioritizeP50: nan},
		{Run: 2, Configuration: "alone", Burst: 500, Bound: 500, PodsPerSec: 60, BindP50: nan, BindP99: nan, FilterP50: nan, PrioritizeP50: nan},
		{Run: 1, Configuration: "extender-bind", Burst: 500, Bound: 500, PodsPerSec: 45, BindP50: 0.004, BindP99: 0.08, FilterP50: 0.002, PrioritizeP50: 0.003, Timeouts: 3},
		{Run: 2, Configuration: "extender-bind", Burst: 500, Bound: 499, PodsPerSec: 0, BindP50: 0.006, BindP99: 0.12, FilterP50: 0.004, PrioritizeP50: 0.005, LateBinds: 1, AlreadyBound: 1},
		{Run: 1, Configuration: "alone", Burst: 500, Rate: fast, Bound: 500, PodsPerSec: 100, BindP50: nan, BindP99: nan, FilterP50: nan, PrioritizeP50: nan},
	}
	var b bytes.Buffer
	WriteTable(&b, rs)
	rows := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{
		"| alone | 500 | default (50/s) | 2 | 50.0 | — | — | — | — | 0 | 0 | 0 | 0 |",
		// median of 45 and 0 is 22.5, against alone's 50 at the default rate, not the 100 at 500/s
		"| extender-bind | 500 | default (50/s) | 2 (1 incomplete) | 22.5 | 45% | 3.0 ms / 4.0 ms | 5.0 ms | 100.0 ms | 3 | 2 | 0 | 0 |",
		"| alone | 500 | 500/s | 1 | 100.0 | — | — | — | — | 0 | 0 | 0 | 0 |",
	}
	if len(rows) != 2+len(want) {
		t.Fatalf("table:\n%s", b.String())
	}
	for i, w := range want {
		if rows[2+i] != w {
			t.Errorf("row %d:\n got %s\nwant %s", i, rows[2+i], w)
		}
	}
}

func TestParseRatesDoublesTheBurstAndRefusesGarbage(t *testing.T) {
	got, err := ParseRates("0, 500")
	if err != nil || len(got) != 2 || got[0] != (cluster.ClientRate{}) || got[1] != (cluster.ClientRate{QPS: 500, Burst: 1000}) {
		t.Fatalf("ParseRates(\"0, 500\") = %v, %v", got, err)
	}
	for _, bad := range []string{"", "fast", "-1", "500x"} {
		if _, err := ParseRates(bad); err == nil {
			t.Errorf("ParseRates(%q) accepted", bad)
		}
	}
}
