// Package demo runs the extender's story on a local control plane: a real kube-apiserver and
// kube-scheduler (the e2e harness's builds), GPU nodes made by the node agent from real
// `nvidia-smi topo -m` captures (`gpu-topology-agent discover -o node`), the extender in cache
// mode behind the scheduler, and four pods that show what it does: a 4-GPU job on NVLink-connected
// GPUs, a MIG pod on a legal placement, a pod group placed whole, and a pod that cannot fit where
// GPU counts alone would place it, each
// printed with its node, its GPUs and the extender's explanation. `make demo` runs it
// (cmd/demo); the test in this package checks the placements it prints.
package demo

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"gpu-topology-extender/tests/e2e/internal/cluster"
)

// Options say where the binaries and captures are.
type Options struct {
	Root     string // the repository
	BinDir   string // etcd, kube-apiserver, kube-scheduler (build/e2e-bin)
	Extender string // gpu-topology-extender
	Agent    string // gpu-topology-agent
	Policy   string
	WorkDir  string // kubeconfig, certificates, configuration
	LogDir   string // the processes' logs
	Out      io.Writer
}

// Namespace holds the story's pods.
const Namespace = "demo"

// The scheduler the story's pods ask for; it calls the extender.
const schedulerName = "default-scheduler"

// machine is one GPU node of the story, from a capture.
type machine struct {
	name, topo, mig, model string
}

var machines = []machine{
	{"h100-a", "hgx-h100-nvswitch.topo", "", "NVIDIA H100 80GB HBM3"},
	{"dgx1v-a", "dgx1-v100-cubemesh.topo", "", "Tesla-V100-SXM2-16GB"},
	{"a100-mig", "hgx-a100-nvswitch.topo", "dgx-a100-mig.txt", "NVIDIA A100-SXM4-80GB"},
	{"l40s-a", "g6e-l40sx4-node.topo", "", "NVIDIA L40S"},
}

// Placement is what the story printed for one pod.
type Placement struct {
	Pod    string
	Node   string // empty: not placed
	GPUs   string // the extender's gputopo.dev/gpus annotation ("0,1,2,3", "mig:0:1g.10gb@2")
	Reason string // why it was not placed
}

// Demo is a running local cluster with the extender.
type Demo struct {
	Kubeconfig  string
	ExtenderURL string // http://127.0.0.1:PORT
	client      kubernetes.Interface
	cp          *cluster.ControlPlane
	procs       []*cluster.Process
	out         io.Writer
}

// Start brings the control plane, the nodes, the extender and kube-scheduler up.
func Start(ctx context.Context, o Options) (*Demo, error) {
	d := &Demo{out: o.Out}
	say := func(format string, args ...any) { fmt.Fprintf(o.Out, format+"\n", args...) }
	say("starting etcd and kube-apiserver …")
	cp, err := cluster.StartControlPlane(ctx, o.BinDir, o.WorkDir, o.LogDir)
	if err != nil {
		return nil, err
	}
	d.cp, d.Kubeconfig = cp, cp.Kubeconfig
	rc, err := clientcmd.BuildConfigFromFlags("", cp.Kubeconfig)
	if err != nil {
		d.Stop()
		return nil, err
	}
	rc.Timeout = 30 * time.Second
	if d.client, err = kubernetes.NewForConfig(rc); err != nil {
		d.Stop()
		return nil, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if _, err := d.client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		d.Stop()
		return nil, err
	}
	migResources := map[string]bool{}
	for _, m := range machines {
		node, err := discoverNode(o, m)
		if err != nil {
			d.Stop()
			return nil, err
		}
		for r := range node.Status.Allocatable {
			if strings.HasPrefix(string(r), "nvidia.com/mig-") {
				migResources[string(r)] = true
			}
		}
		if _, err := d.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
			d.Stop()
			return nil, fmt.Errorf("create node %s: %w", m.name, err)
		}
		say("node %-9s %s (labels from gpu-topology-agent discover on %s)", m.name, m.model, m.topo)
	}
	ext, prefix, err := cluster.StartExtender(ctx, o.LogDir, cluster.ExtenderOptions{
		Binary: o.Extender, Policy: o.Policy, Kubeconfig: cp.Kubeconfig})
	if err != nil {
		d.Stop()
		return nil, err
	}
	d.procs = append(d.procs, ext)
	d.ExtenderURL = strings.TrimSuffix(prefix, "/scheduler")
	managed := []string{"nvidia.com/gpu"}
	for r := range migResources {
		managed = append(managed, r)
	}
	sort.Strings(managed[1:])
	config := cluster.SchedulerConfig(cp.Kubeconfig, cluster.Extender{
		URLPrefix: prefix, NodeCacheCapable: true, Bind: true, Preempt: true, Weight: 12,
		ManagedResources: managed})
	sched, err := cluster.StartScheduler(ctx, o.BinDir, o.WorkDir, o.LogDir, config)
	if err != nil {
		d.Stop()
		return nil, err
	}
	d.procs = append(d.procs, sched)
	say("kube-scheduler calls the extender at %s (cache mode, bind)", prefix)
	return d, nil
}

// discoverNode runs the agent on the machine's capture and reads the Node it prints.
func discoverNode(o Options, m machine) (*corev1.Node, error) {
	data := filepath.Join(o.Root, "tests", "data")
	args := []string{"discover", "--topo-file", filepath.Join(data, "topologies", m.topo),
		"--model", m.model, "-o", "node", "--node-name", m.name}
	if m.mig != "" {
		args = append(args, "--mig-file", filepath.Join(data, "agent", m.mig))
	}
	text, err := exec.Command(o.Agent, args...).Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", o.Agent, strings.Join(args, " "), err)
	}
	var printed corev1.Node
	if err := yaml.Unmarshal(text, &printed); err != nil {
		return nil, fmt.Errorf("the agent's Node for %s: %w", m.name, err)
	}
	gpus := printed.Status.Allocatable["nvidia.com/gpu"]
	extra := map[string]int64{}
	for r, q := range printed.Status.Allocatable {
		if r != "nvidia.com/gpu" {
			extra[string(r)] = q.Value()
		}
	}
	// A Ready node with CPU and memory, as a kubelet would report it (there is none).
	return cluster.FakeGPUNode(m.name, printed.Labels, gpus.Value(), extra), nil
}

// Story creates the pods, waits for each, and prints where it went and why.
func (d *Demo) Story(ctx context.Context) ([]Placement, error) {
	say := func(format string, args ...any) { fmt.Fprintf(d.out, format+"\n", args...) }
	steps := []struct {
		title string
		pods  []*corev1.Pod
		fits  bool
	}{
		{"a 4-GPU training job that wants NVLink between all its GPUs",
			[]*corev1.Pod{pod("train-4gpu", "nvidia.com/gpu", 4, map[string]string{
				"gputopo.dev/min-link": "nvlink"})}, true},
		{"an inference pod asking for one MIG 1g.10gb instance",
			[]*corev1.Pod{pod("infer-mig", "nvidia.com/mig-1g.10gb", 1, nil)}, true},
		{"a pod group of two 2-GPU workers, placed whole",
			[]*corev1.Pod{
				pod("pair-0", "nvidia.com/gpu", 2, map[string]string{"gputopo.dev/group": "pair",
					"gputopo.dev/group-size": "2"}),
				pod("pair-1", "nvidia.com/gpu", 2, map[string]string{"gputopo.dev/group": "pair",
					"gputopo.dev/group-size": "2"}),
			}, true},
		// The 4-GPU job left the H100 board whole: its free 8-GPU NVLink set was the cluster's last
		// (docs/scoring.md, scarce sets), so the job took a quad elsewhere.
		{"an 8-GPU job that wants NVLink between all its GPUs: the H100 board was kept whole for it",
			[]*corev1.Pod{pod("nvlink-8", "nvidia.com/gpu", 8, map[string]string{
				"gputopo.dev/min-link": "nvlink"})}, true},
		{"another 4-GPU NVLink job: the DGX-1V's free quad (the pair group took the other one)",
			[]*corev1.Pod{pod("train-4b", "nvidia.com/gpu", 4, map[string]string{
				"gputopo.dev/min-link": "nvlink"})}, true},
		// GPU counts alone would put it on the 4x L40S node (4 free GPUs): its GPUs have no NVLink,
		// which only the extender sees.
		{"a third one, which no free GPUs can take with NVLink now",
			[]*corev1.Pod{pod("train-4c", "nvidia.com/gpu", 4, map[string]string{
				"gputopo.dev/min-link": "nvlink"})}, false},
	}
	var out []Placement
	for _, step := range steps {
		say("\n== %s", step.title)
		for _, p := range step.pods {
			if _, err := d.client.CoreV1().Pods(Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
				return out, fmt.Errorf("create pod %s: %w", p.Name, err)
			}
		}
		for _, p := range step.pods {
			placed, err := d.wait(ctx, p.Name, step.fits)
			if err != nil {
				return out, err
			}
			out = append(out, placed)
			if placed.Node != "" {
				say("%-10s -> %-9s GPUs %s", placed.Pod, placed.Node, placed.GPUs)
			} else {
				say("%-10s -> Pending: %s", placed.Pod, placed.Reason)
			}
		}
		table, err := d.explainTable(ctx, step.pods[0].Name)
		if err != nil {
			return out, err
		}
		say("explain %s/%s (top 3 nodes):\n%s", Namespace, step.pods[0].Name, indent(table))
	}
	return out, nil
}

func pod(name, res string, count int64, annotations map[string]string) *corev1.Pod {
	q := *resource.NewQuantity(count, resource.DecimalSI)
	list := corev1.ResourceList{corev1.ResourceName(res): q}
	zero := int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, Annotations: annotations},
		Spec: corev1.PodSpec{
			SchedulerName:                 schedulerName,
			TerminationGracePeriodSeconds: &zero,
			Containers: []corev1.Container{{Name: "main", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: list, Limits: list}}},
		},
	}
}

// wait polls the pod until it is bound (fits) or kube-scheduler has called it unschedulable.
func (d *Demo) wait(ctx context.Context, name string, fits bool) (Placement, error) {
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		p, err := d.client.CoreV1().Pods(Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return Placement{}, err
		}
		if p.Spec.NodeName != "" {
			return Placement{Pod: name, Node: p.Spec.NodeName,
				GPUs: p.Annotations["gputopo.dev/gpus"]}, nil
		}
		for _, c := range p.Status.Conditions {
			if !fits && c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse &&
				c.Reason == corev1.PodReasonUnschedulable {
				return Placement{Pod: name, Reason: c.Message}, nil
			}
		}
		select {
		case <-ctx.Done():
			return Placement{}, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return Placement{}, fmt.Errorf("pod %s: neither bound nor unschedulable within 90 s", name)
}

func (d *Demo) explainTable(ctx context.Context, name string) (string, error) {
	body, err := d.get(ctx, "/explain?format=table&top=3&pod="+url.QueryEscape(Namespace+"/"+name))
	return string(body), err
}

func (d *Demo) get(ctx context.Context, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.ExtenderURL+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d: %s", path, resp.StatusCode, body)
	}
	return body, nil
}

func indent(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i := range lines {
		lines[i] = "  " + lines[i]
	}
	return strings.Join(lines, "\n")
}

// Stop ends kube-scheduler, the extender and the control plane.
func (d *Demo) Stop() {
	for i := len(d.procs) - 1; i >= 0; i-- {
		d.procs[i].Stop(5 * time.Second)
	}
	if d.cp != nil {
		d.cp.Stop()
	}
}

// DefaultOptions fills the paths from the repository root and the environment the e2e harness
// reads (E2E_BIN_DIR, GTE_BINARY, GTE_AGENT_BINARY, GTE_POLICY).
func DefaultOptions(root string, out io.Writer) Options {
	env := func(key, def string) string {
		if v := os.Getenv(key); v != "" {
			return v
		}
		return def
	}
	return Options{
		Root:     root,
		BinDir:   env("E2E_BIN_DIR", filepath.Join(root, "build", "e2e-bin")),
		Extender: env("GTE_BINARY", filepath.Join(root, "build", "bin", "gpu-topology-extender")),
		Agent:    env("GTE_AGENT_BINARY", filepath.Join(root, "build", "bin", "gpu-topology-agent")),
		Policy:   env("GTE_POLICY", filepath.Join(root, "config", "scheduler-policy.yaml")),
		Out:      out,
	}
}
