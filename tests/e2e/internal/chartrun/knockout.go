package chartrun

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A knockout removes one grant from the rendered RBAC before it is applied, so that a run shows
// which test needs that grant. Its spelling:
//
//	ClusterRole/NAME#2              rule 2 (counting from 0) of ClusterRole NAME, whole
//	ClusterRole/NAME#0/verbs=watch  one item of one list of a rule (apiGroups, resources, verbs,
//	                                resourceNames)
//	RoleBinding/NAME                a whole binding (ClusterRoleBinding, RoleBinding)
//
// Role works as ClusterRole. Every object of that kind and name is changed.

// ruleLists are the fields of a PolicyRule a knockout can take one item from.
var ruleLists = []string{"apiGroups", "resources", "verbs", "resourceNames"}

// Knockouts lists one knockout per grant of the rendered Roles, ClusterRoles and bindings: each
// item of a rule's lists that has more than one item (removing it narrows the rule), a whole rule
// when every list has one item, and each binding. Removing the last resourceName would widen the
// rule to every name, so a single resourceName is never taken alone.
func Knockouts(m Manifests) []string {
	var out []string
	for _, obj := range m.OfKinds("ClusterRole", "Role") {
		for i, rule := range rules(obj) {
			prefix := fmt.Sprintf("%s/%s#%d", obj.GetKind(), obj.GetName(), i)
			narrowed := false
			for _, field := range ruleLists {
				items := stringList(rule[field])
				if len(items) < 2 {
					continue
				}
				narrowed = true
				for _, item := range items {
					out = append(out, fmt.Sprintf("%s/%s=%s", prefix, field, item))
				}
			}
			if !narrowed {
				out = append(out, prefix)
			}
		}
	}
	for _, obj := range m.OfKinds("ClusterRoleBinding", "RoleBinding") {
		out = append(out, obj.GetKind()+"/"+obj.GetName())
	}
	return out
}

// WithKnockout returns a copy of m with the grant spec names removed; it is an error if spec
// matches nothing.
func (m Manifests) WithKnockout(spec string) (Manifests, error) {
	target, rest, _ := strings.Cut(spec, "#")
	kind, name, ok := strings.Cut(target, "/")
	if !ok || kind == "" || name == "" {
		return nil, fmt.Errorf("knockout %q: want KIND/NAME[#RULE[/FIELD=ITEM]]", spec)
	}
	out := make(Manifests, 0, len(m))
	matched := false
	for _, obj := range m {
		if obj.GetKind() != kind || obj.GetName() != name {
			out = append(out, obj)
			continue
		}
		matched = true
		if rest == "" {
			if kind != "ClusterRoleBinding" && kind != "RoleBinding" {
				return nil, fmt.Errorf("knockout %q: name a rule of a %s (%s#RULE)", spec, kind, target)
			}
			continue // the binding goes
		}
		changed, err := withoutGrant(obj.DeepCopy(), rest)
		if err != nil {
			return nil, fmt.Errorf("knockout %q: %w", spec, err)
		}
		out = append(out, changed)
	}
	if !matched {
		return nil, fmt.Errorf("knockout %q: the chart renders no %s %s", spec, kind, name)
	}
	return out, nil
}

// withoutGrant removes "RULE" or "RULE/FIELD=ITEM" from a role.
func withoutGrant(obj *unstructured.Unstructured, grant string) (*unstructured.Unstructured, error) {
	index, item, _ := strings.Cut(grant, "/")
	i, err := strconv.Atoi(index)
	list := rules(obj)
	if err != nil || i < 0 || i >= len(list) {
		return nil, fmt.Errorf("%s %s has no rule %q (it has %d)", obj.GetKind(), obj.GetName(), index, len(list))
	}
	if item == "" {
		list = slices.Delete(list, i, i+1)
	} else {
		field, value, ok := strings.Cut(item, "=")
		items := stringList(list[i][field])
		at := slices.Index(items, value)
		if !ok || !slices.Contains(ruleLists, field) || at < 0 {
			return nil, fmt.Errorf("rule %d of %s %s has no %q", i, obj.GetKind(), obj.GetName(), item)
		}
		if len(items) == 1 {
			return nil, fmt.Errorf("rule %d of %s %s: %q is the only item of %s; remove the rule (#%d) instead",
				i, obj.GetKind(), obj.GetName(), value, field, i)
		}
		list[i][field] = toAny(slices.Delete(items, at, at+1))
	}
	obj.Object["rules"] = toAnyRules(list)
	return obj, nil
}

func rules(obj *unstructured.Unstructured) []map[string]any {
	raw, _ := obj.Object["rules"].([]any)
	var out []map[string]any
	for _, r := range raw {
		if m, ok := r.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func stringList(v any) []string {
	raw, _ := v.([]any)
	var out []string
	for _, item := range raw {
		if s, ok := item.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func toAny(items []string) []any {
	out := make([]any, len(items))
	for i, s := range items {
		out[i] = s
	}
	return out
}

func toAnyRules(list []map[string]any) []any {
	out := make([]any, len(list))
	for i, r := range list {
		out[i] = r
	}
	return out
}
