package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// The chart mode runs kube-scheduler with the KubeSchedulerConfiguration exactly as the Helm chart
// renders it with its default values (plus the MIG resources the fixtures advertise), so a chart change that kube-scheduler rejects or that changes
// placement fails the suite. Two fields are rewritten, because the test runs outside a cluster:
// the extender's urlPrefix (the in-cluster Service becomes the test's loopback port) and
// clientConnection.kubeconfig (the in-cluster service account becomes the test API server).

// chartRelease and chartNamespace are the release the chart is rendered as.
const (
	chartRelease   = "gte"
	chartNamespace = "gpu-system"
)

// helmBinary is the helm that make test builds (scripts/build-helm.sh), or GTE_HELM.
func helmBinary() string {
	return envOr("GTE_HELM", filepath.Join(cfg.repoRoot, "build", "tools-bin", "helm"))
}

// helmTemplate renders the chart with extra helm arguments.
func helmTemplate(args ...string) ([]byte, error) {
	helm := helmBinary()
	if _, err := os.Stat(helm); err != nil {
		return nil, fmt.Errorf("helm: %w (scripts/build-helm.sh builds it; or set GTE_HELM)", err)
	}
	full := append([]string{"template", chartRelease, filepath.Join(cfg.repoRoot, "charts", "gpu-topology-extender"),
		"--namespace", chartNamespace,
		// helm template talks to no cluster: the scheduler image tag must be given.
		"--set", "scheduler.image.tag=" + serverVersion()}, args...)
	var stderr bytes.Buffer
	cmd := exec.Command(helm, full...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("helm %s: %w: %s", strings.Join(full, " "), err, stderr.String())
	}
	return out, nil
}

// serverVersion is the test API server's version (helm template cannot ask a cluster).
func serverVersion() string {
	if v, err := client.Discovery().ServerVersion(); err == nil {
		return v.GitVersion
	}
	return "v1.37.2"
}

// chartScheduler is what the chart's scheduler configuration says, after the two rewrites.
type chartScheduler struct {
	config         string // config.yaml for kube-scheduler --config
	schedulerName  string // the profile's schedulerName; pods opt in with it
	leaseNamespace string // leader election's namespace ("" when leader election is off)
}

// renderChartScheduler renders the scheduler ConfigMap and rewrites the extender URL and the
// kubeconfig.
func renderChartScheduler(urlPrefix, kubeconfig string) (chartScheduler, error) {
	// The default values, unchanged: an admin who installs the chart as it comes must get MIG pods
	// routed to the extender too (kube-scheduler calls it only for managed resources).
	out, err := helmTemplate("--show-only", "templates/scheduler-configmap.yaml")
	if err != nil {
		return chartScheduler{}, err
	}
	var cm corev1.ConfigMap
	if err := yaml.Unmarshal(out, &cm); err != nil {
		return chartScheduler{}, fmt.Errorf("rendered scheduler ConfigMap: %w", err)
	}
	var config map[string]any
	if err := yaml.Unmarshal([]byte(cm.Data["config.yaml"]), &config); err != nil {
		return chartScheduler{}, fmt.Errorf("rendered config.yaml: %w", err)
	}
	extenders, _ := config["extenders"].([]any)
	if len(extenders) != 1 {
		return chartScheduler{}, fmt.Errorf("rendered config.yaml has %d extenders, want 1", len(extenders))
	}
	ext, _ := extenders[0].(map[string]any)
	rendered, _ := ext["urlPrefix"].(string)
	if !strings.Contains(rendered, "."+chartNamespace+".svc") {
		return chartScheduler{}, fmt.Errorf("rendered urlPrefix %q is not the in-cluster Service", rendered)
	}
	if missing := unmanagedFixtureResources(ext); len(missing) > 0 {
		return chartScheduler{}, fmt.Errorf("the chart's default managedResources lack %v, which the fixtures' nodes advertise: "+
			"kube-scheduler would place those pods without the extender", missing)
	}
	ext["urlPrefix"] = urlPrefix
	config["clientConnection"] = map[string]any{"kubeconfig": kubeconfig}

	var s chartScheduler
	if profiles, _ := config["profiles"].([]any); len(profiles) == 1 {
		p, _ := profiles[0].(map[string]any)
		s.schedulerName, _ = p["schedulerName"].(string)
	}
	if s.schedulerName == "" {
		return chartScheduler{}, fmt.Errorf("rendered config.yaml has no single profile with a schedulerName")
	}
	if le, _ := config["leaderElection"].(map[string]any); le != nil && le["leaderElect"] == true {
		s.leaseNamespace, _ = le["resourceNamespace"].(string)
	}
	text, err := yaml.Marshal(config)
	if err != nil {
		return chartScheduler{}, err
	}
	s.config = string(text)
	return s, nil
}

// unmanagedFixtureResources lists the GPU and MIG resources the fixtures advertise that the rendered
// extender does not manage.
func unmanagedFixtureResources(ext map[string]any) []string {
	managed := map[string]bool{}
	list, _ := ext["managedResources"].([]any)
	for _, item := range list {
		if r, _ := item.(map[string]any); r != nil {
			if name, _ := r["name"].(string); name != "" {
				managed[name] = true
			}
		}
	}
	var missing []string
	for _, r := range managedResources {
		if !managed[r] {
			missing = append(missing, r)
		}
	}
	return missing
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
