// Command rbac-knockouts prints one knockout per grant of the RBAC the Helm chart renders with its
// default values with extender.dra=true (as the chart-identity mode renders them) and the helm
// arguments given after the chart (e.g. --set layout=standalone), one a line, for
// tests/e2e/hack/rbac-knockouts.sh to pass to the chart-identity
// mode as GTE_E2E_RBAC_DROP (spelling in internal/chartrun/knockout.go).
//
//	rbac-knockouts HELM CHART_DIR [HELM_ARG...]
package main

import (
	"fmt"
	"os"

	"gpu-topology-extender/tests/e2e/internal/chartrun"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: rbac-knockouts HELM CHART_DIR [HELM_ARG...]")
		os.Exit(2)
	}
	// The image tag only fills the scheduler's image field; RBAC does not depend on it.
	// extender.dra=true as the chart-identity mode renders it (chart_release_test.go, chartValues),
	// so the DRA watches' grants are knocked out too.
	text, err := chartrun.Render(os.Args[1], os.Args[2], append([]string{"--set", "scheduler.image.tag=v0.0.0",
		"--set", "extender.dra=true"}, os.Args[3:]...)...)
	if err == nil {
		var m chartrun.Manifests
		if m, err = chartrun.Decode(text); err == nil {
			for _, k := range chartrun.Knockouts(m) {
				fmt.Println(k)
			}
			return
		}
	}
	fmt.Fprintln(os.Stderr, "rbac-knockouts:", err)
	os.Exit(1)
}
