package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"gpu-topology-extender/tests/e2e/internal/chartrun"
	"gpu-topology-extender/tests/e2e/internal/cluster"
)

// The ha mode runs the chart's standalone layout (docs/operations.md, "High availability"): two
// extender replicas competing for one Lease with the chart's timings, the leader writing itself
// into the EndpointSlice of a selector-less Service, and kube-scheduler calling that Service. The
// harness plays kube-proxy: serviceProxy forwards each new TCP connection to the endpoint the
// slice names at that moment, and refuses connections while it names none. Its scenarios
// (ha_test.go) kill the leader during bursts and roll the replicas.
//
// The ha-sidecar mode runs the chart's default layout instead: two "pods", each a kube-scheduler
// leader-elected on one Lease (with the timings of the chart's values.yaml, as the chart renders
// them) and an extender it calls on its own address, following that Lease (--follow-lease). Each pod's
// kube-scheduler runs in a UTS namespace of its own with the pod's name as host name, since
// kube-scheduler's holder identity is HOSTNAME_UUID and its extender is told the pod's name.

// haName is the Lease's and the Service's name (the slice is haName-leader), in namespace.
const haName = "gte-e2e-ha"

// haLeaderFlags are the chart's standalone flags (values.yaml extender.leaderElection and
// drainPeriodSeconds, scheduler.extender.httpTimeout's bind deadline) with its defaults.
func haLeaderFlags(l chartrun.LeaseDefaults) []string {
	return []string{
		"--leader-elect",
		"--leader-elect-lease=" + namespace + "/" + haName,
		"--leader-elect-lease-duration=" + chartrun.Flag(l.Extender.LeaseDuration),
		"--leader-elect-renew-deadline=" + chartrun.Flag(l.Extender.RenewDeadline),
		"--leader-elect-retry-period=" + chartrun.Flag(l.Extender.RetryPeriod),
		"--publish-endpoint=" + namespace + "/" + haName,
		"--drain-period=5s",
		"--shutdown-grace=20s",
		"--bind-deadline=2500ms",
	}
}

// haReplica is one extender replica: a pod of the standalone Deployment, or (sidecar) a
// kube-scheduler pod with its extender.
type haReplica struct {
	identity string // its holder identity (the pod's name)
	addr     string // IP:port, the extender's HTTP port
	proc     *cluster.Process
	sched    *cluster.Process // sidecar: the pod's kube-scheduler; nil otherwise
}

// stop sends sig to every process of the replica at once and waits until all are gone (SIGKILL
// after grace).
func (r *haReplica) stop(sig syscall.Signal, grace time.Duration) {
	var wg sync.WaitGroup
	for _, p := range []*cluster.Process{r.proc, r.sched} {
		if p == nil {
			continue
		}
		p.StopSignal = sig
		wg.Add(1)
		go func() { defer wg.Done(); p.Stop(grace) }()
	}
	wg.Wait()
}

// haReplicas are the replicas running now, started and stopped as the Deployment controller would.
type haReplicas struct {
	sidecar bool
	leases  chartrun.LeaseDefaults // the chart's default lease timings, which the replicas run with
	proxy   *serviceProxy          // standalone: the Service in front of the replicas
	dir     string
	// ip is the pod IP they listen on (and publish, standalone): a routable address of this
	// machine (the API server refuses loopback endpoints).
	ip    string
	mu    sync.Mutex
	live  []*haReplica
	count int // replicas started so far, for identities
}

// start runs one more replica and waits until it is ready (its cache synced: standbys are ready
// too, the Service follows the leader through its slice).
func (h *haReplicas) start(ctx context.Context) (*haReplica, error) {
	h.mu.Lock()
	h.count++
	identity := fmt.Sprintf("extender-%d", h.count)
	h.mu.Unlock()
	port, err := cluster.FreePort()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(h.dir, identity)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	addr := net.JoinHostPort(h.ip, strconv.Itoa(port))
	args := []string{"serve", "--listen", addr, "--policy", cfg.policy, "--kubeconfig", cp.Kubeconfig,
		"--leader-elect-identity=" + identity}
	if h.sidecar {
		args = append(args, haSidecarFlags(h.leases)...)
	} else {
		args = append(append(args, "--advertise-address="+h.ip), haLeaderFlags(h.leases)...)
	}
	p, err := cluster.StartProcess("extender", dir, cfg.extender, args...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := cluster.WaitHTTP(ctx, &http.Client{Timeout: 5 * time.Second}, "http://"+addr+"/readyz", "", p); err != nil {
		p.Stop(5 * time.Second)
		return nil, fmt.Errorf("replica %s never became ready: %w", identity, err)
	}
	r := &haReplica{identity: identity, addr: addr, proc: p}
	if h.sidecar {
		lease := haSchedulerLease(h.leases)
		if r.sched, err = startPodScheduler(ctx, dir, identity, "http://"+addr+"/scheduler", &lease); err != nil {
			p.Stop(5 * time.Second)
			return nil, err
		}
	}
	h.mu.Lock()
	h.live = append(h.live, r)
	h.mu.Unlock()
	return r, nil
}

// haSchedulerLease is the sidecar pods' kube-scheduler Lease, with the chart's default timings
// (values.yaml scheduler.leaderElection).
func haSchedulerLease(l chartrun.LeaseDefaults) cluster.Lease {
	return cluster.Lease{Namespace: namespace, Name: haName + "-scheduler", LeaseDuration: l.Scheduler.LeaseDuration,
		RenewDeadline: l.Scheduler.RenewDeadline, RetryPeriod: l.Scheduler.RetryPeriod}
}

// haSidecarFlags are the chart's sidecar flags with its defaults: follow the pod's kube-scheduler
// lease, stop binding at kube-scheduler's renew deadline, read the lease every
// extender.leaderElection.retryPeriod.
func haSidecarFlags(l chartrun.LeaseDefaults) []string {
	lease := haSchedulerLease(l)
	return []string{
		"--follow-lease=" + lease.Namespace + "/" + lease.Name,
		"--leader-elect-renew-deadline=" + chartrun.Flag(l.Scheduler.RenewDeadline),
		"--leader-elect-retry-period=" + chartrun.Flag(l.Extender.RetryPeriod),
		"--drain-period=5s",
		"--shutdown-grace=20s",
		"--bind-deadline=2500ms",
	}
}

// startPodScheduler runs the pod's kube-scheduler, leader-elected, calling the pod's extender at
// urlPrefix, with the pod's name as its host name (unshare --uts).
func startPodScheduler(ctx context.Context, dir, podName, urlPrefix string, lease *cluster.Lease) (*cluster.Process, error) {
	config := cluster.SchedulerConfigLeased(cp.Kubeconfig, cluster.ClientRate{}, &cluster.Extender{
		URLPrefix: urlPrefix, NodeCacheCapable: true, Bind: true, Preempt: true, Weight: extenderWeight,
		ManagedResources: managedResources, HTTPTimeout: 3 * time.Second,
	}, lease)
	path := filepath.Join(dir, "scheduler-config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		return nil, err
	}
	port, err := cluster.FreePort()
	if err != nil {
		return nil, err
	}
	return cluster.RunScheduler(ctx, "unshare", dir, nil, port, "--uts", "--", "sh", "-c",
		`hostname "$0" && exec "$@"`, podName, filepath.Join(cfg.binDir, "kube-scheduler"),
		"--config="+path, "--v=3")
}

// remove forgets a replica that was stopped or killed.
func (h *haReplicas) remove(r *haReplica) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, x := range h.live {
		if x == r {
			h.live = append(h.live[:i], h.live[i+1:]...)
			return
		}
	}
}

func (h *haReplicas) replicas() []*haReplica {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]*haReplica(nil), h.live...)
}

func (h *haReplicas) processes() []*cluster.Process {
	var out []*cluster.Process
	for _, r := range h.replicas() {
		out = append(out, r.proc)
		if r.sched != nil {
			out = append(out, r.sched)
		}
	}
	return out
}

// answered probes once what a kube-scheduler connecting now would reach: through the Service
// (standalone), or each sidecar pod's own extender (sidecar). It reports whether an active leader
// answered, and whether that was a replica other than gone.
func (h *haReplicas) answered(ctx context.Context, gone *haReplica) (answered, other bool) {
	if !h.sidecar {
		if !answersBinds(ctx, "http://"+h.proxy.addr()) {
			return false, false
		}
		backend := h.proxy.current()
		return true, backend != "" && backend != gone.addr
	}
	// All pods at once, and the first other pod's answer ends the probe: a follower extender that
	// is not leading holds a bind up to its deadline (waiting for its kube-scheduler to win), so
	// asking one after the other would add that wait to the figure.
	replicas := h.replicas()
	results := make(chan *haReplica, len(replicas))
	for _, r := range replicas {
		go func() {
			if answersBinds(ctx, "http://"+r.addr) {
				results <- r
			} else {
				results <- nil
			}
		}()
	}
	for range replicas {
		if r := <-results; r != nil {
			answered = true
			if r != gone {
				return true, true
			}
		}
	}
	return answered, false
}

// activeScheduler is the kube-scheduler of the leading sidecar pod (the one whose log the
// scenarios wait on), or nil.
func (h *haReplicas) activeScheduler(ctx context.Context) *cluster.Process {
	if l := h.leader(ctx); l != nil {
		return l.sched
	}
	return nil
}

// leader is the replica that answers binds as the active leader, or nil when none does.
func (h *haReplicas) leader(ctx context.Context) *haReplica {
	for _, r := range h.replicas() {
		if answersBinds(ctx, "http://"+r.addr) {
			return r
		}
	}
	return nil
}

// haProbePod names a pod that never exists: a bind for it reaches the pod lookup at an active
// leader only (a standby, a leader still taking over past the bind deadline, or one stepping down
// refuses before it), so the answer tells which it is as it stands at that moment, unlike the
// gpu_topology_extender_leader gauge, which is sampled every 2 s.
const haProbePod = "failover-probe-no-such-pod"

// answersBinds reports whether a new connection to base (an extender, or the Service) is
// answered by an active leader: POST bind for haProbePod comes back with the API server's "not
// found" for that pod.
func answersBinds(ctx context.Context, base string) bool {
	c := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	body := fmt.Sprintf(`{"PodName":%q,"PodNamespace":%q,"PodUID":"00000000-0000-0000-0000-000000000000","Node":"none"}`,
		haProbePod, namespace)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/scheduler/bind", strings.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var result struct{ Error string }
	if err := json.NewDecoder(resp.Body).Decode(&result); err != nil {
		return false
	}
	return strings.Contains(result.Error, "get pod "+namespace+"/"+haProbePod)
}

// serviceProxy is kube-proxy for the Service haName: every new connection goes to the endpoint
// the slice haName-leader names when it is accepted (the port named "http"); with none, the
// connection is closed at once, as a Service without endpoints rejects it. Connections already
// open stay with their endpoint until either side closes them.
type serviceProxy struct {
	ln      net.Listener
	mu      sync.Mutex
	backend string
	done    chan struct{}
	wg      sync.WaitGroup
}

func startServiceProxy() (*serviceProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &serviceProxy{ln: ln, done: make(chan struct{})}
	p.wg.Add(2)
	go p.followSlice()
	go p.accept()
	return p, nil
}

func (p *serviceProxy) addr() string { return p.ln.Addr().String() }

func (p *serviceProxy) stop() {
	close(p.done)
	p.ln.Close()
	p.wg.Wait()
}

// followSlice reads the slice every 50 ms (kube-proxy follows a watch; the poll adds at most that).
func (p *serviceProxy) followSlice() {
	defer p.wg.Done()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		s, err := client.DiscoveryV1().EndpointSlices(namespace).Get(ctx, haName+"-leader", metav1.GetOptions{})
		cancel()
		switch {
		case err == nil:
			p.set(sliceBackend(s))
		case apierrors.IsNotFound(err):
			p.set("")
		}
		select {
		case <-p.done:
			return
		case <-tick.C:
		}
	}
}

// sliceBackend is the address:port of the slice's first ready endpoint and its "http" port.
func sliceBackend(s *discoveryv1.EndpointSlice) string { return sliceBackendNamed(s, "http") }

// sliceBackendNamed is the address:port of the slice's first ready endpoint and its port portName.
func sliceBackendNamed(s *discoveryv1.EndpointSlice, portName string) string {
	port := int32(0)
	for _, sp := range s.Ports {
		if sp.Name != nil && *sp.Name == portName && sp.Port != nil {
			port = *sp.Port
		}
	}
	for _, e := range s.Endpoints {
		if len(e.Addresses) > 0 && port != 0 && (e.Conditions.Ready == nil || *e.Conditions.Ready) {
			return net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(port)))
		}
	}
	return ""
}

func (p *serviceProxy) set(backend string) {
	p.mu.Lock()
	p.backend = backend
	p.mu.Unlock()
}

func (p *serviceProxy) current() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.backend
}

func (p *serviceProxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(in)
	}
}

func (p *serviceProxy) forward(in net.Conn) {
	defer in.Close()
	backend := p.current()
	if backend == "" {
		return
	}
	out, err := net.DialTimeout("tcp", backend, time.Second)
	if err != nil {
		return
	}
	defer out.Close()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		// Half-close, as a NAT passes the FIN through.
		if tc, ok := dst.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(out, in)
	go pipe(in, out)
	<-done
	<-done
}

// startHAMode starts two replicas and, standalone, the Service proxy and a kube-scheduler
// calling the Service; sidecar, each replica brings its kube-scheduler.
func startHAMode(ctx context.Context, t *testing.T, env *modeEnv, dir string) error {
	sidecar := env.mode.haSidecar
	if !sidecar {
		if err := createSelectorlessService(ctx); err != nil {
			return err
		}
	}
	ip := routableIPv4()
	if ip == "" {
		return fmt.Errorf("no routable IPv4 address on this machine: the API server refuses loopback endpoints")
	}
	leases, err := chartrun.ReadLeaseDefaults(filepath.Join(cfg.repoRoot, "charts", "gpu-topology-extender"))
	if err != nil {
		return err
	}
	h := &haReplicas{dir: dir, ip: ip, sidecar: sidecar, leases: leases}
	env.ha = h
	t.Cleanup(func() {
		for _, r := range h.replicas() {
			r.stop(syscall.SIGINT, 10*time.Second) // teardown: no drain
		}
	})
	for range 2 {
		if _, err := h.start(ctx); err != nil {
			return err
		}
	}
	if sidecar {
		return h.waitSidecarLeader(ctx, env)
	}
	proxy, err := startServiceProxy()
	if err != nil {
		return err
	}
	t.Cleanup(proxy.stop)
	h.proxy = proxy
	base := "http://" + proxy.addr()
	if err := waitLeaderThroughService(ctx, base); err != nil {
		return err
	}
	env.metricsURL = base + "/metrics"
	env.verbsURL = base + "/scheduler"
	schedCfg := cluster.SchedulerConfig(cp.Kubeconfig, cluster.Extender{
		URLPrefix:        env.verbsURL,
		NodeCacheCapable: true,
		Bind:             true,
		Preempt:          true,
		Weight:           extenderWeight,
		ManagedResources: managedResources,
		// The chart's scheduler.extender.httpTimeout.
		HTTPTimeout: 3 * time.Second,
	})
	sched, err := cluster.StartScheduler(ctx, cfg.binDir, dir, dir, schedCfg)
	if err != nil {
		return err
	}
	t.Cleanup(func() { sched.Stop(10 * time.Second) })
	env.scheduler = sched
	return nil
}

// waitSidecarLeader waits until one sidecar pod's extender answers binds (its kube-scheduler won
// the lease and the extender saw it), and points the mode at that pod: the scenarios wait on its
// kube-scheduler's log and its extender's cache.
func (h *haReplicas) waitSidecarLeader(ctx context.Context, env *modeEnv) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if l := h.leader(ctx); l != nil {
			env.scheduler = l.sched
			env.metricsURL = "http://" + l.addr + "/metrics"
			env.verbsURL = "http://" + l.addr + "/scheduler"
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no sidecar pod's extender answered binds within a minute")
}

// createSelectorlessService is the chart's standalone Service: no selector, its endpoints are the
// slice the leader writes.
func createSelectorlessService(ctx context.Context) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: haName, Namespace: namespace},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 8888, Protocol: corev1.ProtocolTCP}}},
	}
	_, err := client.CoreV1().Services(namespace).Create(ctx, svc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// waitLeaderThroughService waits until a new connection through the Service reaches the leader.
func waitLeaderThroughService(ctx context.Context, base string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if answersBinds(ctx, base) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("no extender replica answered as the leader through Service %s within a minute", haName)
}

// writeFailoverFigures appends one line per measurement to GTE_E2E_FAILOVER_OUT when set (the
// make target e2e-failover prints them).
func writeFailoverFigures(line string) {
	path := os.Getenv("GTE_E2E_FAILOVER_OUT")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, line)
}
