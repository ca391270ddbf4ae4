package bench

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"gpu-topology-extender/tests/e2e/internal/cluster"
)

// Result is one burst against one kube-scheduler.
type Result struct {
	Run           int
	Configuration string
	Rate          cluster.ClientRate
	Burst         int // pods created
	Bound         int // pods bound before the burst timeout
	CreateTime    time.Duration
	Elapsed       time.Duration // first create to last bind
	PodsPerSec    float64       // 0 when not every pod was bound
	// BindP50 and BindP99 are the extender's bind latency in seconds (its request-duration
	// histogram, verb bind, interpolated within buckets); NaN without binds by the extender.
	BindP50, BindP99 float64
	// The same for filter and prioritize, which kube-scheduler awaits in its scheduling cycle.
	FilterP50, FilterP99         float64
	PrioritizeP50, PrioritizeP99 float64
	BindCalls                    int // bind requests the extender answered
	BindErrors                   int // of which refused (binds_total{result="error"})
	Abandoned                    int // binds the extender dropped unsent: kube-scheduler had given up on them
	Timeouts                     int // kube-scheduler gave up waiting for a bind answer
	LateBinds                    int // binds that landed after kube-scheduler had given up on them
	Mismatches                   int // "assumed on X but assigned to Y" in kube-scheduler
	AlreadyBound                 int // extender binds refused as already bound
	GPUsTwice                    int // GPUs handed out beyond a node's count or by the same index twice
	// CPU is the CPU time each process used from the first create to the last bind.
	CPU []ProcessCPU

	label string // the burst's pod label value
}

// StaleBinds counts every sign of a bind acted on after kube-scheduler had moved on.
func (r Result) StaleBinds() int { return r.LateBinds + r.Mismatches + r.AlreadyBound }

// Line is one result in one line, for progress output.
func (r Result) Line() string {
	return fmt.Sprintf("run %d %-13s burst %4d rate %-14s %4d/%d bound in %6.1fs (create %4.1fs): "+
		"%6.1f pods/s, bind p50 %s p99 %s, %d bind calls (%d refused, %d abandoned), %d timeouts, "+
		"%d stale (late %d, mismatch %d, already bound %d), %d GPUs twice",
		r.Run, r.Configuration, r.Burst, rateString(r.Rate), r.Bound, r.Burst, r.Elapsed.Seconds(),
		r.CreateTime.Seconds(), r.PodsPerSec, ms(r.BindP50), ms(r.BindP99), r.BindCalls, r.BindErrors, r.Abandoned,
		r.Timeouts, r.StaleBinds(), r.LateBinds, r.Mismatches, r.AlreadyBound, r.GPUsTwice) +
		fmt.Sprintf("; filter p50 %s p99 %s, prioritize p50 %s p99 %s; CPU s:%s",
			ms(r.FilterP50), ms(r.FilterP99), ms(r.PrioritizeP50), ms(r.PrioritizeP99), cpuString(r.CPU))
}

// ProcessCPU is one process's CPU time during a burst.
type ProcessCPU struct {
	Name    string
	Seconds float64
}

func cpuString(cpu []ProcessCPU) string {
	var b strings.Builder
	for _, c := range cpu {
		fmt.Fprintf(&b, " %s %.1f", c.Name, c.Seconds)
	}
	return b.String()
}

func ms(seconds float64) string {
	if math.IsNaN(seconds) {
		return "—"
	}
	if seconds >= 1 {
		return fmt.Sprintf("%.2f s", seconds)
	}
	return fmt.Sprintf("%.1f ms", seconds*1000)
}

// WriteTable writes one Markdown row per (configuration, burst, rate): the median over runs of
// pods/s and the extender's latencies, the worst run's timeouts, stale binds, refused binds and GPUs given
// twice, and, per rate and burst, throughput as a share of kube-scheduler alone where that was measured.
func WriteTable(w io.Writer, results []Result) {
	type key struct {
		config string
		burst  int
		qps    int
	}
	groups := map[key][]Result{}
	var order []key
	for _, r := range results {
		k := key{r.Configuration, r.Burst, r.Rate.QPS}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.qps != b.qps {
			return a.qps < b.qps
		}
		if a.burst != b.burst {
			return a.burst < b.burst
		}
		return configRank(a.config) < configRank(b.config)
	})
	fmt.Fprintln(w, "| configuration | burst | client rate | runs | pods/s (median) | vs alone | "+
		"filter / prioritize p50 | bind p50 | bind p99 | bind timeouts | stale binds | bind refusals | GPUs twice |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, k := range order {
		rs := groups[k]
		pps := median(rs, func(r Result) float64 { return r.PodsPerSec })
		share := "—"
		if alone, ok := groups[key{"alone", k.burst, k.qps}]; ok && k.config != "alone" {
			if base := median(alone, func(r Result) float64 { return r.PodsPerSec }); base > 0 {
				share = fmt.Sprintf("%.0f%%", 100*pps/base)
			}
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %.1f | %s | %s | %s | %s | %d | %d | %d | %d |\n",
			k.config, k.burst, rateString(rs[0].Rate), runsString(rs), pps, share,
			verbPair(median(rs, func(r Result) float64 { return r.FilterP50 }),
				median(rs, func(r Result) float64 { return r.PrioritizeP50 })),
			ms(median(rs, func(r Result) float64 { return r.BindP50 })),
			ms(median(rs, func(r Result) float64 { return r.BindP99 })),
			worst(rs, func(r Result) int { return r.Timeouts }),
			worst(rs, Result.StaleBinds),
			worst(rs, func(r Result) int { return r.BindErrors }),
			worst(rs, func(r Result) int { return r.GPUsTwice }))
	}
}

func verbPair(filter, prioritize float64) string {
	if math.IsNaN(filter) && math.IsNaN(prioritize) {
		return "—"
	}
	return ms(filter) + " / " + ms(prioritize)
}

func configRank(name string) int {
	for i, c := range Configurations {
		if c.Name == name {
			return i
		}
	}
	return len(Configurations)
}

// runsString is the number of runs, and how many of them did not bind every pod.
func runsString(rs []Result) string {
	incomplete := 0
	for _, r := range rs {
		if r.Bound < r.Burst {
			incomplete++
		}
	}
	if incomplete > 0 {
		return fmt.Sprintf("%d (%d incomplete)", len(rs), incomplete)
	}
	return fmt.Sprint(len(rs))
}

// median of the values that are not NaN; NaN if there is none. With an even count it is the mean
// of the middle two.
func median(rs []Result, f func(Result) float64) float64 {
	var v []float64
	for _, r := range rs {
		if x := f(r); !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return math.NaN()
	}
	sort.Float64s(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func worst(rs []Result, f func(Result) int) int {
	m := 0
	for _, r := range rs {
		m = max(m, f(r))
	}
	return m
}

// ParseRates reads "0,500" into client rates: 0 keeps kube-scheduler's defaults (qps 50, burst
// 100), any other q sets qps q and burst 2q (the defaults' ratio).
func ParseRates(list string) ([]cluster.ClientRate, error) {
	var out []cluster.ClientRate
	for _, f := range strings.Split(list, ",") {
		q, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || q < 0 {
			return nil, fmt.Errorf("client rate %q: want a number of requests per second, 0 for the default", f)
		}
		out = append(out, cluster.ClientRate{QPS: q, Burst: 2 * q})
	}
	return out, nil
}
