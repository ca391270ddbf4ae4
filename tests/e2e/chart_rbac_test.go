package e2e

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"gpu-topology-extender/tests/e2e/internal/chartrun"
	"gpu-topology-extender/tests/e2e/internal/cluster"
)

// The API server writes one audit event per request of a service account (cluster.ControlPlane's
// AuditLog). In the chart-identity mode those are the requests of the chart's ServiceAccounts, so
// the log shows both what the chart's RBAC refused and which of its grants were used.

// rbacRule is one PolicyRule.
type rbacRule struct {
	apiGroups, resources, verbs, resourceNames []string
}

// renderedRules reads the rules of a rendered Role or ClusterRole.
func renderedRules(obj *unstructured.Unstructured) []rbacRule {
	raw, _, _ := unstructured.NestedSlice(obj.Object, "rules")
	var out []rbacRule
	for _, r := range raw {
		m, _ := r.(map[string]any)
		list := func(field string) []string {
			s, _, _ := unstructured.NestedStringSlice(m, field)
			return s
		}
		out = append(out, rbacRule{list("apiGroups"), list("resources"), list("verbs"), list("resourceNames")})
	}
	return out
}

// chartUser reports whether an audit event is a request of one of the chart's ServiceAccounts.
func chartUser(e cluster.AuditEvent) bool {
	return strings.HasPrefix(e.User.Username, serviceAccountUser(chartNamespace, ""))
}

// forbiddenRequests are the chart's ServiceAccounts' requests that the API server answered 403,
// one line each with how often it happened.
func forbiddenRequests() ([]string, error) {
	events, err := cluster.ReadAuditLog(cp.AuditLog)
	if err != nil {
		return nil, err
	}
	count := map[string]int{}
	for _, e := range events {
		if chartUser(e) && e.Code() == 403 {
			count[e.String()]++
		}
	}
	var out []string
	for line, n := range count {
		out = append(out, fmt.Sprintf("%s (%d times)", line, n))
	}
	sort.Strings(out)
	return out, nil
}

// forbiddenSummary is "" or, for an error message, the refused requests of the chart's
// ServiceAccounts so far: a process that did not come up usually says why there.
func forbiddenSummary() string {
	lines, err := forbiddenRequests()
	if err != nil {
		return "\n(audit log: " + err.Error() + ")"
	}
	if len(lines) == 0 {
		return ""
	}
	if len(lines) > 20 {
		lines = append(lines[:20], fmt.Sprintf("... and %d more", len(lines)-20))
	}
	return "\nrequests of the chart's ServiceAccounts the API server refused:\n  " + strings.Join(lines, "\n  ")
}

// chartIdentitiesNeverForbidden: during the whole mode, no request of the extender, the
// kube-scheduler or the agent (each with its ServiceAccount's token) was refused by RBAC. This
// catches a missing grant whose refusal a process survives (it logs and retries, or gives up on
// something the placement scenarios do not look at). Runs last.
func chartIdentitiesNeverForbidden(s *scenarioEnv) {
	if !s.mode.mode.chart {
		s.t.Skip("chart-identity mode only")
	}
	lines, err := forbiddenRequests()
	if err != nil {
		s.t.Fatal(err)
	}
	if len(lines) > 0 {
		s.t.Errorf("the API server refused %d kinds of request of the chart's ServiceAccounts:\n  %s",
			len(lines), strings.Join(lines, "\n  "))
	}
}

// chartGrantsAllUsed: every grant (API group x resource x verb x resource name) of every Role and
// ClusterRole the chart renders was used by a ServiceAccount bound to it, in a request the API
// server did not refuse: the chart grants nothing its workloads do not do. Together with the
// other scenarios failing when a grant is removed (tests/e2e/hack/rbac-knockouts.sh), it pins the
// chart's RBAC to what the workloads need. Only meaningful after every scenario before it ran.
func chartGrantsAllUsed(s *scenarioEnv) {
	if !s.mode.mode.chart {
		s.t.Skip("chart-identity mode only")
	}
	if left := s.mode.scenariosNotRunBefore(chartGrantsAllUsedName); len(left) > 0 {
		s.t.Skipf("needs every scenario of the mode to have run first; not run: %v", left)
	}
	events, err := cluster.ReadAuditLog(cp.AuditLog)
	if err != nil {
		s.t.Fatal(err)
	}
	m := s.mode.chart.manifests
	for _, role := range m.OfKinds("ClusterRole", "Role") {
		users := boundUsers(m, role)
		if len(users) == 0 {
			s.t.Errorf("%s %s is bound to no ServiceAccount", role.GetKind(), role.GetName())
			continue
		}
		ns := ""
		if role.GetKind() == "Role" {
			ns = role.GetNamespace()
		}
		for _, g := range grants(renderedRules(role)) {
			if !slices.ContainsFunc(events, func(e cluster.AuditEvent) bool { return g.usedBy(e, users, ns) }) {
				s.t.Errorf("%s %s grants %s, which no request of %v used", role.GetKind(), role.GetName(), g, users)
			}
		}
	}
}

// chartGrantsAllUsedName is that scenario's name in the scenario list.
const chartGrantsAllUsedName = "chart-grants-all-used"

// boundUsers are the ServiceAccount users the chart's bindings give role.
func boundUsers(m chartrun.Manifests, role *unstructured.Unstructured) []string {
	var out []string
	for _, b := range m.OfKinds("ClusterRoleBinding", "RoleBinding") {
		kind, _, _ := unstructured.NestedString(b.Object, "roleRef", "kind")
		name, _, _ := unstructured.NestedString(b.Object, "roleRef", "name")
		if kind != role.GetKind() || name != role.GetName() ||
			(kind == "Role" && b.GetNamespace() != role.GetNamespace()) {
			continue
		}
		subjects, _, _ := unstructured.NestedSlice(b.Object, "subjects")
		for _, s := range subjects {
			sub, _ := s.(map[string]any)
			if sub["kind"] == "ServiceAccount" {
				out = append(out, serviceAccountUser(fmt.Sprint(sub["namespace"]), fmt.Sprint(sub["name"])))
			}
		}
	}
	return out
}

// grant is one thing a rule allows.
type grant struct {
	group, resource, verb, name string
}

func (g grant) String() string {
	s := g.verb + " " + g.resource
	if g.group != "" {
		s += "." + g.group
	}
	if g.name != "" {
		s += " named " + g.name
	}
	return s
}

// grants expands rules into single grants.
func grants(rules []rbacRule) []grant {
	var out []grant
	for _, r := range rules {
		names := r.resourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, group := range r.apiGroups {
			for _, resource := range r.resources {
				for _, verb := range r.verbs {
					for _, name := range names {
						out = append(out, grant{group, resource, verb, name})
					}
				}
			}
		}
	}
	return out
}

// usedBy reports whether e is a request of one of users that g allowed (namespace ns for a Role).
func (g grant) usedBy(e cluster.AuditEvent, users []string, ns string) bool {
	if e.Code() == 403 || !slices.Contains(users, e.User.Username) || e.ObjectRef == nil {
		return false
	}
	return e.Verb == g.verb && e.APIGroup() == g.group && e.Resource() == g.resource &&
		(g.name == "" || e.ObjectRef.Name == g.name) && (ns == "" || e.ObjectRef.Namespace == ns)
}
