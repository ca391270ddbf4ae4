package e2e

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// apiNeed: an API resource (or a feature gate) a scenario needs from the control plane; the
// version matrix runs every scenario on releases that may not serve it.
type apiNeed struct {
	groupVersion, resource string // "scheduling.k8s.io/v1beta1", "podgroups"
	apiServerGate          string // a gate the API server must know (empty: none)
	onByDefault            string // a gate a cluster of the release has on by default (empty: none)
	schedulerGate          string // a gate kube-scheduler must know (empty: none)
	feature                string // what the extender does without it, for the skip message
}

var (
	needPodGroups = apiNeed{groupVersion: "scheduling.k8s.io/v1beta1", resource: "podgroups",
		schedulerGate: "GenericWorkload", feature: "no gang scheduling; groups are sized by annotation, Job or JobSet"}
	needDeviceTaintRules = apiNeed{groupVersion: "resource.k8s.io/v1", resource: "devicetaintrules",
		feature: "the extender reads device taints from ResourceSlices only"}
	needDRAExtendedResource = apiNeed{onByDefault: "DRAExtendedResource",
		feature: "DRA does not back nvidia.com/gpu requests; the device plugin's GPUs are placed as usual"}
	needOptionalNodeOperations = apiNeed{apiServerGate: "DRAOptionalNodeOperations",
		schedulerGate: "DRAOptionalNodeOperations", feature: "companion slices cannot carry spec.skipNodeOperations"}
)

// isUnmet: unmet() != "".
func (n *apiNeed) isUnmet() bool { return n.unmet() != "" }

// unmet says why the control plane cannot run a scenario that needs n ("" when it can, or n is
// nil). Discovery is asked as the extender asks it: a resource missing from its group version's
// list is not served.
func (n *apiNeed) unmet() string {
	if n == nil {
		return ""
	}
	if n.apiServerGate != "" && !cp.Release.APIServerKnows(n.apiServerGate) {
		return fmt.Sprintf("kube-apiserver has no feature gate %s (%s)", n.apiServerGate, n.feature)
	}
	if n.onByDefault != "" && !cp.Release.OnByDefault(n.onByDefault) {
		return fmt.Sprintf("feature gate %s is off by default (%s)", n.onByDefault, n.feature)
	}
	if n.schedulerGate != "" && !cp.Release.SchedulerKnows(n.schedulerGate) {
		return fmt.Sprintf("kube-scheduler has no feature gate %s (%s)", n.schedulerGate, n.feature)
	}
	if n.resource == "" {
		return ""
	}
	served, err := discoveryServes(n.groupVersion, n.resource)
	if err != nil || served {
		return "" // an error: let the scenario fail with the real one
	}
	return fmt.Sprintf("%s.%s is not served (%s)", n.resource, n.groupVersion, n.feature)
}

// discoveryServes: the API server's discovery lists resource in groupVersion.
func discoveryServes(groupVersion, resource string) (bool, error) {
	list, err := client.Discovery().ServerResourcesForGroupVersion(groupVersion)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, r := range list.APIResources {
		if r.Name == resource {
			return true, nil
		}
	}
	return false, nil
}

// expectWatchServed: the extender's gpu_topology_extender_watch_served for each optional resource
// it watches agrees with the API server's discovery (1 served, 0 not), on whatever release runs.
func (s *scenarioEnv) expectWatchServed() {
	s.t.Helper()
	for _, r := range []struct{ label, groupVersion, resource string }{
		{"podgroups", "scheduling.k8s.io/v1beta1", "podgroups"},
		{"devicetaintrules", "resource.k8s.io/v1", "devicetaintrules"},
		{"jobsets", "jobset.x-k8s.io/v1alpha2", "jobsets"},
	} {
		served, err := discoveryServes(r.groupVersion, r.resource)
		if err != nil {
			s.t.Fatalf("discovery of %s: %v", r.groupVersion, err)
		}
		want := 0.0
		if served {
			want = 1
		}
		s.waitScrapeValue("gpu_topology_extender_watch_served", map[string]string{"resource": r.label}, want)
	}
}
