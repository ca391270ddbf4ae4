package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// objectCounts is the size of a cluster cache: nodes, non-terminal pods, and GPUs reserved for
// pods being bound.
type objectCounts struct {
	nodes, pods, reservations int
}

func (c objectCounts) String() string {
	return fmt.Sprintf("{nodes %d, pods %d, reservations %d}", c.nodes, c.pods, c.reservations)
}

// apiObjectCounts is what a caught-up extender cache holds: every node and non-terminal pod the
// API server has, and no pending reservation.
func apiObjectCounts(ctx context.Context) (objectCounts, error) {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return objectCounts{}, err
	}
	pods, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return objectCounts{}, err
	}
	live := 0
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			live++
		}
	}
	return objectCounts{nodes: len(nodes.Items), pods: live}, nil
}

// cacheGauge is the extender's gauge of its cache sizes, one series per kind
// (docs/operations.md, "Metrics").
const cacheGauge = "gpu_topology_extender_cache_objects"

// extenderCacheCounts reads the extender's cache sizes from its /metrics.
func extenderCacheCounts(ctx context.Context, url string) (objectCounts, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return objectCounts{}, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return objectCounts{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return objectCounts{}, fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	var c objectCounts
	fields := map[string]*int{"node": &c.nodes, "pod": &c.pods, "reservation": &c.reservations}
	seen := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		kind, value, ok := gaugeSample(sc.Text())
		if !ok {
			continue
		}
		if dst, known := fields[kind]; known {
			*dst = value
			seen++
		}
	}
	if err := sc.Err(); err != nil {
		return objectCounts{}, err
	}
	if seen != len(fields) {
		return objectCounts{}, fmt.Errorf("GET %s: %d of the %d %s series", url, seen, len(fields), cacheGauge)
	}
	return c, nil
}

// gaugeSample parses `gpu_topology_extender_cache_objects{kind="node"} 5` into ("node", 5).
func gaugeSample(line string) (string, int, bool) {
	rest, ok := strings.CutPrefix(line, cacheGauge+`{kind="`)
	if !ok {
		return "", 0, false
	}
	kind, rest, ok := strings.Cut(rest, `"}`)
	if !ok {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
	if err != nil {
		return "", 0, false
	}
	return kind, int(v), true
}
