package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"gpu-topology-extender/tests/e2e/internal/cluster"
	"gpu-topology-extender/tests/e2e/internal/topo"
)

// benchLabel marks the benchmark's nodes and pods; its pods select its nodes, so nodes left by
// anything else cannot attract them. burstLabel tells one burst's pods from the next one's.
const (
	benchLabel = "e2e.gputopo.dev/bench"
	burstLabel = "e2e.gputopo.dev/bench-burst"
	nodePrefix = "bench-n"
)

// nodeKinds are the machines the fake nodes imitate, alternately: 8 GPUs each, with the model
// label a node agent would publish.
var nodeKinds = []struct{ capture, model string }{
	{"dgx1-v100-cubemesh.topo", "Tesla-V100-SXM2-16GB"},
	{"hgx-a100-nvswitch.topo", "NVIDIA-A100-SXM4-80GB"},
}

// createNodes creates o.Nodes Node objects, status included (as a kubelet registers one): labels-v1
// topology labels, 8 allocatable nvidia.com/gpu, Ready. There is no kubelet behind them.
func (b *bench) createNodes(ctx context.Context) error {
	var templates []*corev1.Node
	for _, k := range nodeKinds {
		n, err := nodeTemplate(filepath.Join(b.o.Topologies, k.capture), k.model)
		if err != nil {
			return err
		}
		templates = append(templates, n)
	}
	nodes := make([]*corev1.Node, b.o.Nodes)
	for i := range nodes {
		node := templates[i%len(templates)].DeepCopy()
		node.Name = fmt.Sprintf("%s%04d", nodePrefix, i)
		node.Labels["kubernetes.io/hostname"] = node.Name
		gpus := node.Status.Allocatable["nvidia.com/gpu"]
		b.nodeGPUs[node.Name] = gpus.Value()
		nodes[i] = node
	}
	return parallel(b.o.Nodes, 16, func(i int) error {
		node := nodes[i]
		_, err := b.client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("create node %s: %w", node.Name, err)
		}
		return nil
	})
}

func nodeTemplate(capture, model string) (*corev1.Node, error) {
	m, err := topo.ParseFile(capture)
	if err != nil {
		return nil, err
	}
	labels, err := topo.Labels(m, topo.State{Model: model}, topo.DefaultPrefix)
	if err != nil {
		return nil, err
	}
	labels[benchLabel] = "true"
	return cluster.FakeGPUNode("", labels, int64(m.N), nil), nil
}

// deleteNodes deletes the benchmark's nodes and waits until they are gone.
func (b *bench) deleteNodes() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sel := metav1.ListOptions{LabelSelector: benchLabel}
	if err := b.client.CoreV1().Nodes().DeleteCollection(ctx, metav1.DeleteOptions{}, sel); err != nil {
		b.logf("delete nodes: %v", err)
		return
	}
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := b.client.CoreV1().Nodes().List(ctx, sel)
		return err == nil && len(list.Items) == 0, nil
	})
	if err != nil {
		b.logf("nodes still present after delete: %v", err)
	}
}

// newPod is one pod of a burst: one GPU (requests = limits), restricted to the benchmark's nodes.
func (b *bench) newPod(burst string, i int) *corev1.Pod {
	one := *resource.NewQuantity(1, resource.DecimalSI)
	list := corev1.ResourceList{"nvidia.com/gpu": one}
	zero := int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s-%04d", burst, i),
			Namespace: b.o.Namespace,
			Labels:    map[string]string{benchLabel: "true", burstLabel: burst},
		},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{benchLabel: "true"},
			TerminationGracePeriodSeconds: &zero,
			Containers: []corev1.Container{{
				Name:      "main",
				Image:     "registry.k8s.io/pause:3.10", // never pulled: there is no kubelet
				Resources: corev1.ResourceRequirements{Requests: list, Limits: list},
			}},
		},
	}
}

// apiCounts is what a caught-up extender cache holds: every node and every non-terminal pod.
func (b *bench) apiCounts(ctx context.Context) (nodes, pods int, err error) {
	nl, err := b.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		return 0, 0, err
	}
	pl, err := b.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, 0, err
	}
	for _, p := range pl.Items {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			pods++
		}
	}
	return len(nl.Items), pods, nil
}

// deleteBurst deletes a burst's pods and waits until the API server, kube-scheduler and the
// extender have all seen them go, so the next burst starts from free GPUs everywhere.
func (b *bench) deleteBurst(ctx context.Context, s *stack, burst string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	zero := int64(0)
	sel := metav1.ListOptions{LabelSelector: burstLabel + "=" + burst}
	err := b.client.CoreV1().Pods(b.o.Namespace).DeleteCollection(ctx,
		metav1.DeleteOptions{GracePeriodSeconds: &zero}, sel)
	if err != nil {
		return fmt.Errorf("delete burst %s: %w", burst, err)
	}
	err = wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		list, err := b.client.CoreV1().Pods(b.o.Namespace).List(ctx, sel)
		if err != nil {
			return false, err
		}
		return len(list.Items) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("burst %s: pods still present: %w", burst, err)
	}
	// v=3: `"Delete event for scheduled pod" pod="ns/burst-0001"`, one per bound pod.
	err = wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
		left := countContaining(s.scheduler.Grep("Add event for scheduled pod"), burst) -
			countContaining(s.scheduler.Grep("Delete event for scheduled pod"), burst)
		return left <= 0, nil
	})
	if err != nil {
		return fmt.Errorf("burst %s: kube-scheduler did not see every deletion: %w", burst, err)
	}
	return b.waitExtendersCaughtUp(ctx, s)
}

// parallel runs f(0..n-1) on workers goroutines and returns the first error.
func parallel(n, workers int, f func(i int) error) error {
	next := make(chan int, n)
	for i := range n {
		next <- i
	}
	close(next)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := f(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}
