package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"

	"gpu-topology-extender/tests/e2e/internal/chartrun"
	"gpu-topology-extender/tests/e2e/internal/cluster"
)

// The chart-identity mode runs the chart as a cluster would (docs/testing.md, "The
// chart-identity mode"): the chart's ServiceAccounts, RBAC and ConfigMaps are applied to the test
// API server, each workload runs with the token of its ServiceAccount (TokenRequest API) and with
// its container's arguments as rendered, its ConfigMaps written at their mount paths. A missing
// RBAC verb, a wrong mount path or a wrong argument then fails the suite.

// chartNamespace is the namespace the chart is rendered for.
const chartNamespace = chartrun.Namespace

// chartValues are the only values the mode sets besides the scheduler image tag (helmTemplate):
// the harness waits on kube-scheduler's --v=3 log lines ("Add event for node"), which the chart's
// default --v=2 does not write; tests/e2e/cmd/rbac-knockouts renders with the same extender.dra.
// extender.dra is on: the mode then also covers the DRA watches' grants and the scheduler config
// without managedResources (every pod reaches the extender).
var chartValues = []string{"--set", "scheduler.verbosity=3", "--set", "extender.dra=true"}

// helmBinary is the helm that make test builds (scripts/build-helm.sh), or GTE_HELM.
func helmBinary() string {
	return envOr("GTE_HELM", filepath.Join(cfg.repoRoot, "build", "tools-bin", "helm"))
}

// helmTemplate renders the chart with extra helm arguments.
func helmTemplate(args ...string) ([]byte, error) {
	// helm template talks to no cluster: the scheduler image tag must be given.
	return chartrun.Render(helmBinary(), filepath.Join(cfg.repoRoot, "charts", "gpu-topology-extender"),
		append([]string{"--set", "scheduler.image.tag=" + serverVersion()}, args...)...)
}

// serverVersion is the test API server's version (helm template cannot ask a cluster).
func serverVersion() string {
	if v, err := client.Discovery().ServerVersion(); err == nil {
		return v.GitVersion
	}
	return "v1.37.2"
}

// identityKinds are what the mode applies for real: who the workloads are and what they read.
// Workloads are not applied (no controller would run them; the harness runs their pods itself).
var identityKinds = []string{"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "ConfigMap"}

// chartRun is one applied release: its rendered objects and a kubeconfig per ServiceAccount.
type chartRun struct {
	dir         string
	manifests   chartrun.Manifests
	kubeconfigs map[string]string // ServiceAccount name -> kubeconfig with its token
}

// applyChartRelease renders the chart with the mode's values (set), removes the GTE_E2E_RBAC_DROP grant if one is set, applies
// the identity objects, waits until RBAC enforces the bindings, and writes a kubeconfig for each
// ServiceAccount with a token from the TokenRequest API.
func applyChartRelease(ctx context.Context, dir string, set []string) (*chartRun, error) {
	text, err := helmTemplate(append(slices.Clone(chartValues), set...)...)
	if err != nil {
		return nil, err
	}
	m, err := chartrun.Decode(text)
	if err != nil {
		return nil, err
	}
	if cfg.rbacDrop != "" {
		if m, err = m.WithKnockout(cfg.rbacDrop); err != nil {
			return nil, fmt.Errorf("GTE_E2E_RBAC_DROP: %w", err)
		}
		fmt.Printf("e2e: chart-identity: RBAC grant %s removed from the rendered chart\n", cfg.rbacDrop)
	}
	r := &chartRun{dir: dir, manifests: m, kubeconfigs: map[string]string{}}
	a, err := newApplier()
	if err != nil {
		return nil, err
	}
	for _, obj := range m.OfKinds(identityKinds...) {
		if err := a.apply(ctx, obj, false); err != nil {
			return nil, err
		}
	}
	if err := waitRBACEnforced(ctx, m); err != nil {
		return nil, err
	}
	for _, sa := range m.OfKinds("ServiceAccount") {
		if err := r.writeIdentity(ctx, sa.GetNamespace(), sa.GetName()); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// writeIdentity asks the TokenRequest API for a token of the ServiceAccount, as the kubelet does
// for a pod's projected token, and writes it into a kubeconfig.
func (r *chartRun) writeIdentity(ctx context.Context, ns, name string) error {
	hours := int64(3 * 3600) // longer than the suite's 40-minute timeout
	tr, err := client.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hours}},
		metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("TokenRequest for ServiceAccount %s/%s: %w", ns, name, err)
	}
	path := filepath.Join(r.dir, name+".kubeconfig")
	if err := cluster.WriteKubeconfig(path, cp.URL, cp.PKI.CAFile, serviceAccountUser(ns, name), tr.Status.Token); err != nil {
		return err
	}
	r.kubeconfigs[name] = path
	return nil
}

// serviceAccountUser is the user name the API server gives a ServiceAccount's tokens.
func serviceAccountUser(ns, name string) string {
	return "system:serviceaccount:" + ns + ":" + name
}

// identity is the kubeconfig of the pod's ServiceAccount.
func (r *chartRun) identity(spec corev1.PodSpec) (string, error) {
	name := spec.ServiceAccountName
	if name == "" {
		name = "default"
	}
	path, ok := r.kubeconfigs[name]
	if !ok {
		return "", fmt.Errorf("the pod runs as ServiceAccount %q, which the chart does not render", name)
	}
	return path, nil
}

// images are the container images the chart names, as the harness can run them: the repository's
// Dockerfile puts both binaries in /usr/local/bin with the extender as ENTRYPOINT; the
// kube-scheduler image has kube-scheduler on its PATH. The extender's --path-prefix is the URL
// path of its verbs.
func images() map[string]chartrun.Image {
	agent, _ := agentPaths()
	scheduler := filepath.Join(cfg.binDir, "kube-scheduler")
	return map[string]chartrun.Image{
		"gpu-topology-extender": {Entrypoint: "/usr/local/bin/gpu-topology-extender", Binaries: map[string]string{
			"/usr/local/bin/gpu-topology-extender": cfg.extender,
			"/usr/local/bin/gpu-topology-agent":    agent,
		}, URLPathFlags: []string{"--path-prefix"}},
		"registry.k8s.io/kube-scheduler": {Binaries: map[string]string{
			"kube-scheduler":                scheduler,
			"/usr/local/bin/kube-scheduler": scheduler,
		}},
	}
}

// chartPodIP is the pod IP the harness gives every pod: a routable address of this machine (the
// API server refuses loopback addresses in an EndpointSlice), else loopback.
func chartPodIP() string {
	if ip := routableIPv4(); ip != "" {
		return ip
	}
	return "127.0.0.1"
}

// prepare makes the container of a rendered workload runnable for a pod on node (nodeRoot is
// that node's filesystem, for hostPath volumes).
func (r *chartRun) prepare(w chartrun.Workload, container, node, nodeRoot string) (*chartrun.Process, error) {
	kubeconfig, err := r.identity(w.Template.Spec)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", w.Kind, w.Name, err)
	}
	proc, err := chartrun.Prepare(w.Template.Spec, container, chartrun.Placement{
		PodRoot:    filepath.Join(r.dir, "pods", w.Name),
		NodeName:   node,
		NodeRoot:   nodeRoot,
		Namespace:  w.Namespace,
		PodName:    w.Name + "-0",
		PodIP:      chartPodIP(),
		Kubeconfig: kubeconfig,
		Images:     images(),
		ConfigMap: func(name string) (map[string]string, error) {
			ctx, cancel := apiContext()
			defer cancel()
			cm, err := client.CoreV1().ConfigMaps(w.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, err
			}
			return cm.Data, nil
		},
		FreePort: cluster.FreePort,
	})
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", w.Kind, w.Name, err)
	}
	return proc, nil
}

// waitProbe waits until the container's readiness (or liveness) probe answers 200, as the kubelet
// would before the pod counts as ready.
func waitProbe(ctx context.Context, proc *chartrun.Process, p *cluster.Process) error {
	url, err := proc.ProbeURL()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return cluster.WaitHTTP(ctx, insecureLoopbackClient(), url, "", p)
}

// applier applies rendered objects with server-side apply as the test's admin.
type applier struct {
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

func newApplier() (*applier, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", cp.Kubeconfig)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	return &applier{dyn: dyn, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(client.Discovery()))}, nil
}

// apply applies obj (a server-side dry run if dryRun), creating its namespace first.
func (a *applier) apply(ctx context.Context, obj *unstructured.Unstructured, dryRun bool) error {
	gvk := obj.GroupVersionKind()
	mapping, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return fmt.Errorf("%s %s: the API server does not know this kind: %w", gvk, obj.GetName(), err)
	}
	var target dynamic.ResourceInterface = a.dyn.Resource(mapping.Resource)
	if mapping.Scope.Name() == "namespace" {
		ns := obj.GetNamespace()
		if ns == "" {
			ns = chartNamespace
		}
		if err := ensureNamespace(ctx, ns); err != nil {
			return err
		}
		target = a.dyn.Resource(mapping.Resource).Namespace(ns)
	}
	opts := metav1.ApplyOptions{FieldManager: "gte-e2e", Force: true}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	if _, err := target.Apply(ctx, obj.GetName(), obj, opts); err != nil {
		return fmt.Errorf("apply %s %s: %w", obj.GetKind(), obj.GetName(), err)
	}
	return nil
}

// ensureNamespace creates a namespace unless it exists.
func ensureNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil &&
		!apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("namespace %s: %w", name, err)
	}
	return nil
}

// waitRBACEnforced waits until the RBAC authorizer, which learns of new roles and bindings through
// its informers, allows each bound ServiceAccount the first rule of its role: a process started
// earlier could be refused what the chart grants it, for a moment.
func waitRBACEnforced(ctx context.Context, m chartrun.Manifests) error {
	for _, b := range m.OfKinds("ClusterRoleBinding", "RoleBinding") {
		rule, err := firstRule(ctx, m, b)
		if err != nil {
			return err
		}
		if rule == nil {
			continue // a role left with no rules (GTE_E2E_RBAC_DROP)
		}
		subjects, _, _ := unstructured.NestedSlice(b.Object, "subjects")
		for _, s := range subjects {
			sub, _ := s.(map[string]any)
			if sub["kind"] != "ServiceAccount" {
				continue
			}
			user := serviceAccountUser(fmt.Sprint(sub["namespace"]), fmt.Sprint(sub["name"]))
			if err := waitAllowed(ctx, user, b.GetNamespace(), rule); err != nil {
				return fmt.Errorf("%s %s: %w", b.GetKind(), b.GetName(), err)
			}
		}
	}
	return nil
}

// firstRule is the first rule of the role a binding names: the rendered one, or the API server's
// for the roles Kubernetes bootstraps (system:kube-scheduler).
func firstRule(ctx context.Context, m chartrun.Manifests, binding *unstructured.Unstructured) (*rbacRule, error) {
	kind, _, _ := unstructured.NestedString(binding.Object, "roleRef", "kind")
	name, _, _ := unstructured.NestedString(binding.Object, "roleRef", "name")
	var rules []rbacRule
	if obj := m.Find(kind, name); obj != nil {
		rules = renderedRules(obj)
	} else {
		var bootstrapped []rbacv1.PolicyRule
		if kind == "ClusterRole" {
			role, err := client.RbacV1().ClusterRoles().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("ClusterRole %s: %w", name, err)
			}
			bootstrapped = role.Rules
		} else {
			role, err := client.RbacV1().Roles(binding.GetNamespace()).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("Role %s/%s: %w", binding.GetNamespace(), name, err)
			}
			bootstrapped = role.Rules
		}
		for _, r := range bootstrapped {
			rules = append(rules, rbacRule{r.APIGroups, r.Resources, r.Verbs, r.ResourceNames})
		}
	}
	for _, r := range rules {
		if len(r.apiGroups) > 0 && len(r.resources) > 0 && len(r.verbs) > 0 {
			return &r, nil
		}
	}
	return nil, nil
}

// waitAllowed polls a SubjectAccessReview for the first grant of rule until it is allowed.
func waitAllowed(ctx context.Context, user, ns string, rule *rbacRule) error {
	resource, sub, _ := strings.Cut(rule.resources[0], "/")
	attrs := &authorizationv1.ResourceAttributes{Namespace: ns, Verb: rule.verbs[0], Group: rule.apiGroups[0],
		Resource: resource, Subresource: sub}
	if len(rule.resourceNames) > 0 {
		attrs.Name = rule.resourceNames[0]
	}
	_, saNS, _ := strings.Cut(strings.TrimPrefix(user, "system:serviceaccount:"), ":")
	review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User:               user,
		Groups:             []string{"system:serviceaccounts", "system:serviceaccounts:" + saNS, "system:authenticated"},
		ResourceAttributes: attrs,
	}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, err := client.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
		if err == nil && got.Status.Allowed {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("RBAC never allowed %s to %s %s (%v)", user, attrs.Verb, rule.resources[0], err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
