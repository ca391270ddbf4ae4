package e2e

import (
	"path/filepath"

	"gpu-topology-extender/tests/e2e/internal/chartrun"
)

// Kinds the chart renders that need CRDs the test API server does not have (Prometheus Operator).
var crdKinds = map[string]bool{"ServiceMonitor": true, "PrometheusRule": true}

// chartManifestsDryRun applies every object the chart renders, with its default values and with
// every option on (tests/ops/values-all-on.yaml), to the real API server with a server-side dry
// run: the API server's own validation must accept each one (field names, types, enums, RBAC
// rules, probe shapes), which helm lint cannot check.
func chartManifestsDryRun(s *scenarioEnv) {
	if !s.mode.mode.chart {
		s.t.Skip("runs once, in chart-identity mode")
	}
	a, err := newApplier()
	if err != nil {
		s.t.Fatal(err)
	}
	for _, values := range []struct{ name, file string }{
		{"default values", ""},
		{"every option on", filepath.Join(cfg.repoRoot, "tests", "ops", "values-all-on.yaml")},
	} {
		var args []string
		if values.file != "" {
			args = append(args, "-f", values.file)
		}
		out, err := helmTemplate(args...)
		if err != nil {
			s.t.Fatalf("%s: %v", values.name, err)
		}
		objects, err := chartrun.Decode(out)
		if err != nil {
			s.t.Fatalf("%s: %v", values.name, err)
		}
		applied := 0
		for _, obj := range objects {
			if crdKinds[obj.GetKind()] {
				continue
			}
			ctx, cancel := apiContext()
			err := a.apply(ctx, obj, true)
			cancel()
			if err != nil {
				s.t.Errorf("%s: server-side dry run refused: %v", values.name, err)
				continue
			}
			applied++
		}
		if applied == 0 {
			s.t.Errorf("%s: nothing applied", values.name)
		}
		s.t.Logf("%s: %d objects accepted by a server-side dry run", values.name, applied)
	}
}
