package chartrun

import (
	"strings"
	"testing"
)

const testRBAC = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ext}
rules:
- apiGroups: [""]
  resources: ["nodes"]
  verbs: ["list", "watch"]
- apiGroups: [""]
  resources: ["pods/binding"]
  verbs: ["create"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: lease, namespace: ns}
rules:
- apiGroups: ["coordination.k8s.io"]
  resources: ["leases"]
  resourceNames: ["one"]
  verbs: ["get", "update"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ext}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ext}
subjects: [{kind: ServiceAccount, name: ext, namespace: ns}]
`

func TestKnockoutsListEveryGrantOnce(t *testing.T) {
	m, err := Decode([]byte(testRBAC))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(Knockouts(m), " ")
	// Rule 0 has two verbs: each alone; rule 1 has one item per list: the whole rule; the Role's
	// single resourceName is never taken alone (that would widen it); the binding whole.
	want := "ClusterRole/ext#0/verbs=list ClusterRole/ext#0/verbs=watch ClusterRole/ext#1 " +
		"Role/lease#0/verbs=get Role/lease#0/verbs=update ClusterRoleBinding/ext"
	if got != want {
		t.Errorf("Knockouts:\n got %s\nwant %s", got, want)
	}
}

func TestWithKnockoutRemovesExactlyOneGrant(t *testing.T) {
	m, err := Decode([]byte(testRBAC))
	if err != nil {
		t.Fatal(err)
	}
	out, err := m.WithKnockout("ClusterRole/ext#0/verbs=watch")
	if err != nil {
		t.Fatal(err)
	}
	if got := stringList(rules(out.Find("ClusterRole", "ext"))[0]["verbs"]); strings.Join(got, ",") != "list" {
		t.Errorf("verbs after knocking out watch: %v", got)
	}
	if got := stringList(rules(m.Find("ClusterRole", "ext"))[0]["verbs"]); len(got) != 2 {
		t.Errorf("the original was changed: %v", got)
	}
	if out, err = m.WithKnockout("ClusterRole/ext#1"); err != nil || len(rules(out.Find("ClusterRole", "ext"))) != 1 {
		t.Errorf("whole rule: %v", err)
	}
	if out, err = m.WithKnockout("ClusterRoleBinding/ext"); err != nil || out.Find("ClusterRoleBinding", "ext") != nil {
		t.Errorf("binding: %v", err)
	}
	for _, bad := range []string{"ClusterRole/nope#0", "ClusterRole/ext#2", "ClusterRole/ext#1/verbs=create",
		"ClusterRole/ext#0/verbs=patch", "ClusterRole/ext", "ext"} {
		if _, err := m.WithKnockout(bad); err == nil {
			t.Errorf("WithKnockout(%q) accepted", bad)
		}
	}
}
