package bench

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"gpu-topology-extender/tests/e2e/internal/cluster"
	"gpu-topology-extender/tests/e2e/internal/promtext"
)

// Extender metrics (docs/operations.md, "Metrics").
const (
	latencyHistogram = "gpu_topology_extender_http_request_duration_seconds"
	bindsTotal       = "gpu_topology_extender_binds_total"
	// bindsAbandoned counts binds the extender dropped unsent because kube-scheduler had given up
	// on them (caller gone, or older than --bind-deadline); builds without it read 0.
	bindsAbandoned = "gpu_topology_extender_binds_abandoned_total"
	gpusAnnotation = "gputopo.dev/gpus"
)

// logCounts are the kube-scheduler and extender log lines a burst is judged by. Both processes
// live across bursts, so a burst's figures are the counts after it minus those before it.
type logCounts struct {
	// timeouts: kube-scheduler gave up waiting for the extender's bind answer (its httpTimeout):
	// `Error scheduling pod; retrying … Post "…/bind": … (Client.Timeout exceeded …)`.
	timeouts int
	// lateBinds: a bind kube-scheduler had given up on went through anyway, which kube-scheduler
	// finds on retry: "Pod has been assigned to node. Abort adding it back to queue."
	lateBinds int
	// mismatches: kube-scheduler assumed the pod on one node while the API server had bound it to
	// another: "… was assumed on X but assigned to Y".
	mismatches int
	// alreadyBound: the extender refused a bind because the pod was already bound (an answer to a
	// request kube-scheduler had abandoned and retried elsewhere or again).
	alreadyBound int
}

func countLogs(s *stack) logCounts {
	var c logCounts
	for _, l := range s.scheduler.Grep("Client.Timeout exceeded", "deadline exceeded") {
		if strings.Contains(l, "/bind") {
			c.timeouts++
		}
	}
	c.lateBinds = len(s.scheduler.Grep("Pod has been assigned to node. Abort adding it back to queue"))
	c.mismatches = len(s.scheduler.Grep("but assigned to"))
	if s.extender != nil {
		c.alreadyBound = countContaining(s.extender.Grep("bind failed"), "already bound")
	}
	return c
}

func (c logCounts) minus(o logCounts) logCounts {
	return logCounts{c.timeouts - o.timeouts, c.lateBinds - o.lateBinds, c.mismatches - o.mismatches,
		c.alreadyBound - o.alreadyBound}
}

// extenderSample is what a burst reads from the extender's /metrics before and after.
type extenderSample struct {
	bindLatency []promtext.Bucket
	// filterLatency and prioritizeLatency: kube-scheduler waits for both inside its serial
	// scheduling cycle, so they bound the pods per second it can schedule at all.
	filterLatency     []promtext.Bucket
	prioritizeLatency []promtext.Bucket
	bindCalls         float64
	bindErrors        float64
	abandoned         float64
}

func scrapeExtender(ctx context.Context, s *stack) (extenderSample, error) {
	if s.extender == nil {
		return extenderSample{}, nil
	}
	m, err := promtext.Scrape(ctx, s.metricsURL)
	if err != nil {
		return extenderSample{}, err
	}
	var h [3][]promtext.Bucket
	for i, verb := range []string{"bind", "filter", "prioritize"} {
		if h[i], err = m.Histogram(latencyHistogram, map[string]string{"verb": verb}); err != nil {
			return extenderSample{}, err
		}
	}
	return extenderSample{
		bindLatency:       h[0],
		filterLatency:     h[1],
		prioritizeLatency: h[2],
		bindCalls:         m.Value(bindsTotal, nil),
		bindErrors:        m.Value(bindsTotal, map[string]string{"result": "error"}),
		abandoned:         m.Value(bindsAbandoned, nil),
	}, nil
}

// burst creates n one-GPU pods at once and waits until every one is bound. Throughput is n over the
// time from the first create to the last bind the harness's watch saw.
func (b *bench) burst(ctx context.Context, s *stack, n int) (Result, error) {
	b.bursts++
	name := fmt.Sprintf("b%02d-%d", b.bursts, n)
	nan := math.NaN()
	r := Result{Burst: n, label: name, BindP50: nan, BindP99: nan, FilterP50: nan, FilterP99: nan,
		PrioritizeP50: nan, PrioritizeP99: nan}

	before, err := scrapeExtender(ctx, s)
	if err != nil {
		return r, err
	}
	logsBefore := countLogs(s)

	cpuBefore := b.cpuSeconds(s)
	w, err := b.watchBinds(ctx, name)
	if err != nil {
		return r, err
	}
	defer w.stop()

	start := time.Now()
	err = parallel(n, 32, func(i int) error {
		_, err := b.client.CoreV1().Pods(b.o.Namespace).Create(ctx, b.newPod(name, i), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return r, fmt.Errorf("create pods: %w", err)
	}
	r.CreateTime = time.Since(start)

	last, bound := w.waitAll(ctx, n, b.o.BurstTimeout)
	r.Bound = bound
	r.CPU = b.cpuSeconds(s)
	for i := range r.CPU {
		r.CPU[i].Seconds -= cpuBefore[i].Seconds
	}
	if bound < n {
		r.Elapsed = time.Since(start)
	} else {
		r.Elapsed = last.Sub(start)
		r.PodsPerSec = float64(n) / r.Elapsed.Seconds()
	}

	after, err := b.extenderSettled(ctx, s, before, bound)
	if err != nil {
		return r, err
	}
	if s.extender != nil {
		d := promtext.Delta(before.bindLatency, after.bindLatency)
		r.BindP50, r.BindP99 = promtext.Quantile(0.5, d), promtext.Quantile(0.99, d)
		f := promtext.Delta(before.filterLatency, after.filterLatency)
		p := promtext.Delta(before.prioritizeLatency, after.prioritizeLatency)
		r.FilterP50, r.FilterP99 = promtext.Quantile(0.5, f), promtext.Quantile(0.99, f)
		r.PrioritizeP50, r.PrioritizeP99 = promtext.Quantile(0.5, p), promtext.Quantile(0.99, p)
		r.BindCalls = int(after.bindCalls - before.bindCalls)
		r.BindErrors = int(after.bindErrors - before.bindErrors)
		r.Abandoned = int(after.abandoned - before.abandoned)
	}
	logs := countLogs(s).minus(logsBefore)
	r.Timeouts = logs.timeouts
	r.LateBinds, r.Mismatches, r.AlreadyBound = logs.lateBinds, logs.mismatches, logs.alreadyBound
	if r.GPUsTwice, err = b.gpusGivenTwice(ctx, name); err != nil {
		return r, err
	}
	if bound < n {
		return r, fmt.Errorf("%d of %d pods bound within %s", bound, n, b.o.BurstTimeout)
	}
	return r, nil
}

// extenderSettled scrapes the extender once it has answered a bind request for every bound pod:
// the API server shows a pod bound before the extender has written its annotation, answered and
// counted the request, so an immediate scrape would miss the slowest binds, exactly those p99 is
// about. Without the extender binding, one scrape.
func (b *bench) extenderSettled(ctx context.Context, s *stack, before extenderSample, bound int) (extenderSample, error) {
	if !s.config.Bind {
		return scrapeExtender(ctx, s)
	}
	var last extenderSample
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var err error
		if last, err = scrapeExtender(ctx, s); err != nil {
			return false, err
		}
		d := promtext.Delta(before.bindLatency, last.bindLatency)
		return len(d) > 0 && int(d[len(d)-1].Count) >= bound, nil
	})
	if err != nil {
		return last, fmt.Errorf("extender answered fewer bind requests than pods were bound: %w", err)
	}
	return last, nil
}

// cpuSeconds reads the CPU time each process of the burst has used so far: kube-scheduler, the
// extender (and its standby), and the control plane. On two shared cores throughput is CPU: these say who spent it.
func (b *bench) cpuSeconds(s *stack) []ProcessCPU {
	procs := []*cluster.Process{s.scheduler}
	for _, p := range []*cluster.Process{s.extender, s.standby} {
		if p != nil {
			procs = append(procs, p)
		}
	}
	var out []ProcessCPU
	for _, p := range append(procs, b.o.ControlPlane...) {
		sec, err := p.CPUSeconds()
		if err != nil {
			sec = math.NaN()
		}
		out = append(out, ProcessCPU{Name: p.Name, Seconds: sec})
	}
	return out
}

// bindWatch records, for each pod of a burst, when the harness first saw it bound.
type bindWatch struct {
	mu      sync.Mutex
	boundAt map[string]time.Time
	last    time.Time
	stopCh  chan struct{}
}

func (b *bench) watchBinds(ctx context.Context, burst string) (*bindWatch, error) {
	w := &bindWatch{boundAt: map[string]time.Time{}, stopCh: make(chan struct{})}
	factory := informers.NewSharedInformerFactoryWithOptions(b.client, 0,
		informers.WithNamespace(b.o.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = burstLabel + "=" + burst }))
	inf := factory.Core().V1().Pods().Informer()
	record := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok && p.Spec.NodeName != "" {
			w.seen(p.Name)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    record,
		UpdateFunc: func(_, obj any) { record(obj) },
	}); err != nil {
		return nil, err
	}
	factory.Start(w.stopCh)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		w.stop()
		return nil, fmt.Errorf("pod watch did not sync")
	}
	return w, nil
}

func (w *bindWatch) seen(pod string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.boundAt[pod]; !ok {
		now := time.Now()
		w.boundAt[pod] = now
		w.last = now
	}
}

// waitAll waits until n pods are bound or timeout passes; it returns the time of the last bind
// seen and how many were bound.
func (w *bindWatch) waitAll(ctx context.Context, n int, timeout time.Duration) (time.Time, int) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_ = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.boundAt) >= n, nil
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last, len(w.boundAt)
}

func (w *bindWatch) stop() { close(w.stopCh) }

// gpusGivenTwice counts accounting violations among a burst's bound pods: a node whose pods
// request more GPUs than it has, and each GPU index that the gputopo.dev/gpus annotations of two
// pods on one node share.
func (b *bench) gpusGivenTwice(ctx context.Context, burst string) (int, error) {
	list, err := b.client.CoreV1().Pods(b.o.Namespace).List(ctx,
		metav1.ListOptions{LabelSelector: burstLabel + "=" + burst})
	if err != nil {
		return 0, err
	}
	requested := map[string]int64{}
	taken := map[string]map[string]bool{} // node -> GPU index -> taken
	bad := 0
	for _, p := range list.Items {
		node := p.Spec.NodeName
		if node == "" {
			continue
		}
		q := p.Spec.Containers[0].Resources.Requests["nvidia.com/gpu"]
		requested[node] += q.Value()
		v, ok := p.Annotations[gpusAnnotation]
		if !ok {
			continue
		}
		if taken[node] == nil {
			taken[node] = map[string]bool{}
		}
		for _, idx := range strings.Split(v, ",") {
			idx = strings.TrimSpace(idx)
			if taken[node][idx] {
				bad++
			}
			taken[node][idx] = true
		}
	}
	for node, n := range requested {
		if alloc := b.nodeGPUs[node]; n > alloc {
			bad += int(n - alloc)
		}
	}
	return bad, nil
}
