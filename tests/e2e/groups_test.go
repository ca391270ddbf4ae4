package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"gpu-topology-extender/tests/e2e/internal/cluster"
	"gpu-topology-extender/tests/e2e/internal/topo"
)

// Pod groups against the real kube-scheduler (docs/groups.md): nodes in three NVLink cliques with
// uneven free capacity; an annotated group (3 x 4 GPUs), a JobSet-labelled group (2 x 4 GPUs, its
// size read from the JobSet object the extender watches) and four competing 1-GPU pods, all
// created at once. Every group must land inside one clique and no GPU may be given twice.
//
// Gang off: the mode's kube-scheduler (no GenericWorkload gate) schedules the members one by one.
// Gang on: a second kube-scheduler with the gate, its own schedulerName and the same extender
// schedules each PodGroup (gang minCount) as one cycle, assuming members only in its snapshot;
// the JobSet-labelled pods then name their PodGroup (spec.schedulingGroup.podGroupName), which
// takes precedence, so their size comes from the PodGroup the extender watches.
//
// Free GPUs: clique c1 = 4 + 8 = 12, c2 = 4 + 8 + 8 + 2 = 22, c3 = 4 + 2 = 6. However the four
// singles land, c1 keeps >= 8 and c2 >= 18, so the groups always fit whole (12 in c1 and 8 in c2,
// or 12 in c2 and 8 in c1). Each clique has a node with one free 4-GPU set (c1-a, c2-a, c3-a) and
// c2 and c3 a node with 2 free GPUs, where packing puts the singles. kube-scheduler with a
// GPU-blind extender (the control's, every node alike) split a group over cliques in each of two
// trial runs of groups-gang-off (it also sends 4-GPU members to nodes with 2 free GPUs, which it
// counts as 8 allocatable).

const (
	cliqueLabel = "nvidia.com/gpu.clique"
	// gangSchedulerName is the profile of the gang-on kube-scheduler.
	gangSchedulerName = "gte-gang-scheduler"
	groupsTimeout     = 2 * time.Minute
)

var jobSetResource = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}

// groupsGangOff: the mode's kube-scheduler, one pod at a time.
func groupsGangOff(s *scenarioEnv) {
	if !groupsRunHere(s) {
		return
	}
	placeGroupsWhole(s, false)
	// The group-size owners and DRA's optional kinds, as discovery serves them on this release
	// (the version matrix runs this on releases without PodGroups or DeviceTaintRules).
	s.expectWatchServed()
}

// groupsGangOn: a kube-scheduler with GenericWorkload on schedules PodGroups as gangs.
func groupsGangOn(s *scenarioEnv) {
	if !groupsRunHere(s) {
		return
	}
	placeGroupsWhole(s, true)
}

// groupsRunHere: groups need the cluster cache (full-Node mode places members pod by pod, by
// design), and one mode shows it; the chart-identity mode would run the same code again.
func groupsRunHere(s *scenarioEnv) bool {
	if s.mode.mode.name != "cache" || s.mode.extender == nil {
		s.t.Skip("runs in cache mode only (groups need the extender's cluster cache)")
		return false
	}
	return true
}

// groupMember is one pod of a group as the scenario creates it.
type groupMember struct {
	group string // the scenario's name for the group, for the assertions
	pod   *corev1.Pod
}

func placeGroupsWhole(s *scenarioEnv, gang bool) {
	schedulerName := s.mode.schedulerName
	if gang {
		sched := s.startGangScheduler()
		schedulerName = gangSchedulerName
		defer sched.Stop(10 * time.Second)
	}
	specs := []nodeSpec{
		{name: "c1-a", capture: hgxA100, state: topo.State{Used: "11110000"}},
		{name: "c1-b", capture: hgxA100},
		{name: "c2-a", capture: hgxA100, state: topo.State{Used: "00001111"}},
		{name: "c2-b", capture: hgxA100},
		{name: "c2-c", capture: hgxA100},
		{name: "c2-d", capture: hgxA100, state: topo.State{Used: "11111100"}},
		{name: "c3-a", capture: hgxA100, state: topo.State{Used: "11110000"}},
		{name: "c3-b", capture: hgxA100, state: topo.State{Used: "11111100"}},
	}
	for i := range specs {
		clique := "nvl-" + strings.SplitN(specs[i].name, "-", 2)[0]
		specs[i].mutate = func(labels map[string]string) { labels[cliqueLabel] = clique }
	}
	s.createNodes(specs...)
	if gang {
		s.waitGangSchedulerSawNodes()
	}

	wholeBefore := s.scrapeValue("gpu_topology_extender_groups_placed_total",
		map[string]string{"level": cliqueLabel, "placement": "whole"})
	unknownBefore := s.scrapeValue("gpu_topology_extender_group_decisions_total",
		map[string]string{"outcome": "size_unknown"})

	jobSet := s.name + "-js"
	s.createJobSet(jobSet, 2)
	var members []groupMember
	var podGroups []string
	annotatedPG, jobSetPG := s.name+"-train", s.name+"-js"
	if gang {
		s.createPodGroup(annotatedPG, 3)
		s.createPodGroup(jobSetPG, 2)
		podGroups = []string{annotatedPG, jobSetPG}
	}
	for i := range 3 {
		pod := s.newPod(fmt.Sprintf("train-%d", i), "nvidia.com/gpu", 4)
		pod.Annotations = map[string]string{key("group"): "train", key("group-size"): "3"}
		if gang {
			joinPodGroup(pod, annotatedPG)
		}
		members = append(members, groupMember{"train", pod})
	}
	for i := range 2 {
		pod := s.newPod(fmt.Sprintf("js-%d", i), "nvidia.com/gpu", 4)
		job := fmt.Sprintf("%s-workers-%d", jobSet, i)
		for k, v := range map[string]string{
			"jobset.sigs.k8s.io/jobset-name":           jobSet,
			"jobset.sigs.k8s.io/replicatedjob-name":    "workers",
			"jobset.sigs.k8s.io/job-index":             fmt.Sprint(i),
			"jobset.sigs.k8s.io/job-global-index":      fmt.Sprint(i),
			"batch.kubernetes.io/job-name":             job,
			"batch.kubernetes.io/job-completion-index": "0",
		} {
			pod.Labels[k] = v
		}
		if gang {
			joinPodGroup(pod, jobSetPG)
		}
		members = append(members, groupMember{"jobset", pod})
	}
	for i := range 4 {
		members = append(members, groupMember{"", s.newPod(fmt.Sprintf("single-%d", i), "nvidia.com/gpu", 1)})
	}
	for _, m := range members {
		m.pod.Spec.SchedulerName = schedulerName
		// kube-scheduler's group cycle wants one priority on the PodGroup and its pods; the
		// Priority admission plugin, which would resolve it, is off here.
		m.pod.Spec.Priority = new(int32)
		s.pods = append(s.pods, m.pod.Name)
	}
	s.createAllAtOnce(members)

	bound := s.waitAllBound(groupsTimeout)
	s.checkNoGPUGivenTwice(bound)
	s.checkGroupsInOneClique(members, bound)
	// A member's bind must never be refused: kube-scheduler binds only what the group's cycle
	// placed, re-runs a refused member at once (no backoff) and leaves the others bound. With the
	// gang on, one cycle filters every member before any binds: each member is pinned to its own
	// held slot (docs/groups.md, "Pins"), so two members never land on a node holding one slot.
	refused := s.mode.extender.Grep(`msg="bind failed"`)
	for _, m := range members {
		if m.group == "" || !anyLineContains(refused, "pod="+namespace+"/"+m.pod.Name+" ") {
			continue
		}
		s.t.Errorf("the extender refused a bind of group member %s (see %s)", m.pod.Name, s.mode.extender.LogPath)
	}
	// Both groups were planned (their sizes known: the annotation, and the JobSet or PodGroup
	// object from the extender's watch) and, one by one, bound whole into their plans.
	s.waitScrapeValue("gpu_topology_extender_groups_placed_total",
		map[string]string{"level": cliqueLabel, "placement": "whole"}, wholeBefore+2)
	if got := s.scrapeValue("gpu_topology_extender_group_decisions_total",
		map[string]string{"outcome": "size_unknown"}); got != unknownBefore {
		s.t.Errorf("group_decisions_total{outcome=size_unknown} rose from %v to %v", unknownBefore, got)
	}
	for _, pg := range podGroups {
		s.expectPodGroupScheduled(pg)
	}
}

// joinPodGroup names the PodGroup in the pod's spec.schedulingGroup.
func joinPodGroup(pod *corev1.Pod, podGroup string) {
	name := podGroup
	pod.Spec.SchedulingGroup = &corev1.PodSchedulingGroup{PodGroupName: &name}
}

// createAllAtOnce creates every pod concurrently, so they reach kube-scheduler as one burst.
func (s *scenarioEnv) createAllAtOnce(members []groupMember) {
	s.t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(members))
	for _, m := range members {
		wg.Add(1)
		go func(pod *corev1.Pod) {
			defer wg.Done()
			ctx, cancel := apiContext()
			defer cancel()
			if _, err := client.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				errs <- fmt.Errorf("create %s: %w", pod.Name, err)
			}
		}(m.pod)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		s.t.Error(err)
	}
	if s.t.Failed() {
		s.t.FailNow()
	}
}

// checkGroupsInOneClique: the members of each group are bound to nodes of one clique.
func (s *scenarioEnv) checkGroupsInOneClique(members []groupMember, bound []corev1.Pod) {
	s.t.Helper()
	ctx, cancel := apiContext()
	defer cancel()
	nodeOf := map[string]string{}
	for _, p := range bound {
		nodeOf[p.Name] = p.Spec.NodeName
	}
	cliques := map[string]map[string][]string{} // group -> clique -> pods
	for _, m := range members {
		if m.group == "" {
			continue
		}
		node, err := client.CoreV1().Nodes().Get(ctx, nodeOf[m.pod.Name], metav1.GetOptions{})
		if err != nil {
			s.t.Fatalf("node of %s: %v", m.pod.Name, err)
		}
		clique := node.Labels[cliqueLabel]
		if cliques[m.group] == nil {
			cliques[m.group] = map[string][]string{}
		}
		cliques[m.group][clique] = append(cliques[m.group][clique], m.pod.Name+"@"+node.Name)
	}
	for group, byClique := range cliques {
		if len(byClique) != 1 {
			s.t.Errorf("group %s split over %d cliques: %v", group, len(byClique), byClique)
		} else {
			s.t.Logf("group %s in one clique: %v", group, byClique)
		}
	}
}

// createJobSet creates a JobSet with one replicated job of `replicas` Jobs of one pod each (no
// controller runs: only its size matters, which the extender reads from it).
func (s *scenarioEnv) createJobSet(name string, replicas int64) {
	s.t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "jobset.x-k8s.io/v1alpha2",
		"kind":       "JobSet",
		"metadata":   map[string]any{"name": name, "namespace": namespace},
		"spec": map[string]any{"replicatedJobs": []any{map[string]any{
			"name":     "workers",
			"replicas": replicas,
			"template": map[string]any{"spec": map[string]any{
				"parallelism": int64(1), "completions": int64(1), "completionMode": "Indexed",
			}},
		}}},
	}}
	ctx, cancel := apiContext()
	defer cancel()
	if _, err := dyn.Resource(jobSetResource).Namespace(namespace).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create JobSet %s: %v", name, err)
	}
	s.t.Cleanup(func() {
		ctx, cancel := apiContext()
		defer cancel()
		err := dyn.Resource(jobSetResource).Namespace(namespace).Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			s.t.Errorf("delete JobSet %s: %v", name, err)
		}
	})
}

// createPodGroup creates a gang PodGroup of minCount members, priority 0 like its pods. The
// PodGroupProtection admission plugin adds a finalizer only kube-controller-manager removes; none
// runs here, so cleanup strips it before deleting.
func (s *scenarioEnv) createPodGroup(name string, minCount int32) {
	s.t.Helper()
	pg := &schedulingv1beta1.PodGroup{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: schedulingv1beta1.PodGroupSpec{
			SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{
				Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount},
			},
			Priority: new(int32),
		},
	}
	ctx, cancel := apiContext()
	defer cancel()
	if _, err := client.SchedulingV1beta1().PodGroups(namespace).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		s.t.Fatalf("create PodGroup %s: %v", name, err)
	}
	s.t.Cleanup(func() { s.deletePodGroup(name) })
}

func (s *scenarioEnv) deletePodGroup(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pgs := client.SchedulingV1beta1().PodGroups(namespace)
	_, err := pgs.Patch(ctx, name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		s.t.Errorf("strip the finalizers of PodGroup %s: %v", name, err)
		return
	}
	if err := pgs.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		s.t.Errorf("delete PodGroup %s: %v", name, err)
		return
	}
	err = wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		_, err := pgs.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		s.t.Errorf("PodGroup %s still present after delete: %v", name, err)
	}
}

// expectPodGroupScheduled: kube-scheduler's gang cycle succeeded for the PodGroup (its
// PodGroupInitiallyScheduled condition is True): the gang path, not pod by pod, placed it.
func (s *scenarioEnv) expectPodGroupScheduled(name string) {
	s.t.Helper()
	var last string
	err := s.poll(seenTimeout, func(ctx context.Context) (bool, error) {
		pg, err := client.SchedulingV1beta1().PodGroups(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range pg.Status.Conditions {
			if c.Type == "PodGroupInitiallyScheduled" {
				last = fmt.Sprintf("%s/%s: %s", c.Status, c.Reason, c.Message)
				return c.Status == metav1.ConditionTrue, nil
			}
		}
		last = "no PodGroupInitiallyScheduled condition"
		return false, nil
	})
	if err != nil {
		s.t.Errorf("PodGroup %s: not scheduled as a gang (last: %s): %v", name, last, err)
	}
}

// startGangScheduler runs a second kube-scheduler with GenericWorkload on (GangScheduling joins
// its default profile), named gangSchedulerName, calling the mode's extender as the mode's own
// scheduler does. Started before the scenario's nodes, so its informer sees them arrive.
func (s *scenarioEnv) startGangScheduler() *cluster.Process {
	s.t.Helper()
	s.gangScheduler = s.startExtraScheduler("gang-scheduler", gangSchedulerName, managedResources, cluster.FeatureGates)
	return s.gangScheduler
}

// startExtraScheduler runs another kube-scheduler, its profile named schedulerName, with the
// feature gates `gates` (those its release knows), calling the mode's extender (binding, preempting) for pods that ask for
// `managed` (nil: every pod); its log and config go to <mode>/<dirName>.
func (s *scenarioEnv) startExtraScheduler(dirName, schedulerName string, managed []string, gates string) *cluster.Process {
	s.t.Helper()
	dir := filepath.Join(logDir, s.mode.mode.name, dirName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	config := cluster.SchedulerConfig(cp.Kubeconfig, cluster.Extender{
		URLPrefix:        s.mode.verbsURL,
		NodeCacheCapable: true,
		Bind:             true,
		Preempt:          true,
		Weight:           extenderWeight,
		ManagedResources: managed,
	})
	config = strings.Replace(config, "schedulerName: "+corev1.DefaultSchedulerName, "schedulerName: "+schedulerName, 1)
	path := filepath.Join(dir, "scheduler-config.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		s.t.Fatal(err)
	}
	port, err := cluster.FreePort()
	if err != nil {
		s.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := []string{"--config=" + path, "--v=3"}
	if known := cp.Release.KnownGates(gates, true); known != "" {
		args = append(args, "--feature-gates="+known)
	}
	sched, err := cluster.RunScheduler(ctx, filepath.Join(cfg.binDir, "kube-scheduler"), dir, nil, port, args...)
	if err != nil {
		s.t.Fatalf("%s kube-scheduler: %v", schedulerName, err)
	}
	return sched
}

// waitGangSchedulerSawNodes waits until the gang scheduler's informer has every scenario node.
func (s *scenarioEnv) waitGangSchedulerSawNodes() {
	s.t.Helper()
	for _, name := range s.nodes {
		field := `node="` + name + `"`
		err := s.poll(seenTimeout, func(context.Context) (bool, error) {
			return anyLineContains(s.gangScheduler.Grep("Add event for node"), field), nil
		})
		if err != nil {
			s.t.Fatalf("the gang kube-scheduler did not see node %s (see %s): %v", name, s.gangScheduler.LogPath, err)
		}
	}
}

// installJobSetCRD serves jobset.x-k8s.io/v1alpha2 JobSets (schema left open: no JobSet
// controller runs, the objects only carry sizes) and waits until discovery lists them.
func installJobSetCRD(ctx context.Context) error {
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": "jobsets.jobset.x-k8s.io"},
		"spec": map[string]any{
			"group": "jobset.x-k8s.io",
			"scope": "Namespaced",
			"names": map[string]any{"plural": "jobsets", "singular": "jobset", "kind": "JobSet", "listKind": "JobSetList"},
			"versions": []any{map[string]any{
				"name": "v1alpha2", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"type": "object", "x-kubernetes-preserve-unknown-fields": true,
				}},
			}},
		},
	}}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	if _, err := dyn.Resource(crds).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return wait.PollUntilContextCancel(ctx, pollInterval, true, func(context.Context) (bool, error) {
		list, err := client.Discovery().ServerResourcesForGroupVersion("jobset.x-k8s.io/v1alpha2")
		if err != nil {
			return false, nil
		}
		for _, r := range list.APIResources {
			if r.Name == "jobsets" {
				return true, nil
			}
		}
		return false, nil
	})
}

// groupsOneModel: a group of three 4-GPU pods on a cluster of three GPU generations, no level
// labels: an empty H100 NVSwitch board, one with a GPU used on each socket, an empty DGX-1V and an
// A100 with a GPU used on each socket. Only the two H100 boards hold three 4-GPU sets of one model,
// so every member lands on an H100 (docs/groups.md, "One GPU model"); the tightest nodes across
// models would mix all three generations (kube-scheduler alone put them on the DGX-1V and the
// A100 in a trial run). Cache mode only, like every group scenario.
const groupsOneModelOdds = 0.1

func groupsOneModel(s *scenarioEnv) {
	if !groupsRunHere(s) {
		return
	}
	s.createNodes(
		nodeSpec{name: "h100-a", capture: hgxH100},
		nodeSpec{name: "h100-b", capture: hgxH100, state: topo.State{Used: "10001000"}},
		nodeSpec{name: "v100", capture: dgx1V},
		nodeSpec{name: "a100", capture: hgxA100, state: topo.State{Used: "10001000"}},
	)
	var members []groupMember
	for i := range 3 {
		pod := s.newPod(fmt.Sprintf("train-%d", i), "nvidia.com/gpu", 4)
		pod.Annotations = map[string]string{key("group"): "train", key("group-size"): "3"}
		members = append(members, groupMember{"train", pod})
		s.pods = append(s.pods, pod.Name)
	}
	s.createAllAtOnce(members)
	bound := s.waitAllBound(groupsTimeout)
	s.checkNoGPUGivenTwice(bound)
	for _, p := range bound {
		if node := strings.TrimPrefix(p.Spec.NodeName, s.name+"-"); !strings.HasPrefix(node, "h100-") {
			s.t.Errorf("member %s bound to %s: want one of the H100 boards (one GPU model)", p.Name, p.Spec.NodeName)
		}
	}
}
