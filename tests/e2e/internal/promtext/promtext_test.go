package promtext

import (
	"math"
	"strings"
	"testing"
)

const exposition = `# HELP gpu_topology_extender_http_request_duration_seconds Time from a complete request body to the answer.
# TYPE gpu_topology_extender_http_request_duration_seconds histogram
gpu_topology_extender_http_request_duration_seconds_bucket{verb="bind",le="0.01"} 10
gpu_topology_extender_http_request_duration_seconds_bucket{verb="bind",le="0.1"} 90
gpu_topology_extender_http_request_duration_seconds_bucket{verb="bind",le="1"} 100
gpu_topology_extender_http_request_duration_seconds_bucket{verb="bind",le="+Inf"} 100
gpu_topology_extender_http_request_duration_seconds_bucket{verb="filter",le="0.01"} 7
gpu_topology_extender_http_request_duration_seconds_bucket{verb="filter",le="0.1"} 7
gpu_topology_extender_http_request_duration_seconds_bucket{verb="filter",le="1"} 7
gpu_topology_extender_http_request_duration_seconds_bucket{verb="filter",le="+Inf"} 7
gpu_topology_extender_binds_total{result="ok"} 95
gpu_topology_extender_binds_total{result="error"} 5
odd_label{path="a\"b,c}"} 1.5e3
`

func TestParseReadsValuesAndEscapedLabels(t *testing.T) {
	ss, err := Parse(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	if got := ss.Value("gpu_topology_extender_binds_total", map[string]string{"result": "error"}); got != 5 {
		t.Errorf("binds error = %v, want 5", got)
	}
	if got := ss.Value("gpu_topology_extender_binds_total", nil); got != 100 {
		t.Errorf("binds summed over results = %v, want 100", got)
	}
	if got := ss.Value("odd_label", map[string]string{"path": `a"b,c}`}); got != 1500 {
		t.Errorf("escaped label value: got %v, want 1500", got)
	}
}

// The benchmark's bind p50/p99 come from here: a wrong interpolation would report a figure the
// extender never had.
func TestQuantileInterpolatesInsideTheBucketLikePrometheus(t *testing.T) {
	ss, err := Parse(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ss.Histogram("gpu_topology_extender_http_request_duration_seconds", map[string]string{"verb": "bind"})
	if err != nil {
		t.Fatal(err)
	}
	// rank 50 of 100: 40 of the 80 observations in (0.01, 0.1] -> 0.01 + 0.09*40/80.
	if got, want := Quantile(0.5, b), 0.055; math.Abs(got-want) > 1e-9 {
		t.Errorf("p50 = %v, want %v", got, want)
	}
	// rank 99: 9 of the 10 in (0.1, 1] -> 0.1 + 0.9*0.9.
	if got, want := Quantile(0.99, b), 0.91; math.Abs(got-want) > 1e-9 {
		t.Errorf("p99 = %v, want %v", got, want)
	}
	// Between two scrapes only the new observations count.
	before := []Bucket{{0.01, 10}, {0.1, 10}, {1, 10}, {math.Inf(1), 10}}
	d := Delta(before, b)
	if d[len(d)-1].Count != 90 || d[0].Count != 0 {
		t.Fatalf("delta %v", d)
	}
	if got, want := Quantile(0.5, d), 0.01+0.09*45/80; math.Abs(got-want) > 1e-9 {
		t.Errorf("p50 of delta = %v, want %v", got, want)
	}
	if !math.IsNaN(Quantile(0.5, Delta(b, b))) {
		t.Error("no observation between scrapes must give NaN, not a figure")
	}
	inf := []Bucket{{0.1, 0}, {1, 0}, {math.Inf(1), 4}}
	if got := Quantile(0.99, inf); got != 1 {
		t.Errorf("rank in +Inf bucket = %v, want the largest finite bound 1", got)
	}
}
