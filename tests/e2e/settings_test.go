package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// settings come from the environment so run.sh, make and a developer's shell can steer one run.
type settings struct {
	repoRoot   string // the repository; this package lives in <repoRoot>/tests/e2e
	binDir     string // E2E_BIN_DIR: kube-apiserver, kube-scheduler, etcd
	extender   string // GTE_BINARY: the extender under test
	policy     string // GTE_POLICY: its policy file
	topologies string // GTE_TOPOLOGIES: nvidia-smi topo -m captures
	modes      []mode // GTE_E2E_MODES: comma-separated mode names
	keepLogs   bool   // GTE_E2E_KEEP_LOGS=1 keeps the log directory of a passing run
	// control (GTE_E2E_CONTROL): "" runs the extender under test; "noop" runs the GPU-blind
	// control extender instead (noop_extender_test.go), against which every placement scenario
	// must fail. A demonstration, never part of `make test`.
	control string
	// rbacDrop (GTE_E2E_RBAC_DROP) removes one grant from the chart's rendered RBAC before the
	// chart-identity mode applies it (chartrun.Knockouts lists them), to show which test needs it.
	// A demonstration run by tests/e2e/hack/rbac-knockouts.sh, never part of `make test`.
	rbacDrop string
}

func loadSettings() (settings, error) {
	wd, err := os.Getwd()
	if err != nil {
		return settings{}, err
	}
	root := filepath.Clean(filepath.Join(wd, "..", ".."))
	s := settings{
		repoRoot:   root,
		binDir:     envOr("E2E_BIN_DIR", filepath.Join(root, "build", "e2e-bin")),
		extender:   envOr("GTE_BINARY", filepath.Join(root, "build", "bin", "gpu-topology-extender")),
		policy:     envOr("GTE_POLICY", filepath.Join(root, "config", "scheduler-policy.yaml")),
		topologies: envOr("GTE_TOPOLOGIES", filepath.Join(root, "tests", "data", "topologies")),
		keepLogs:   os.Getenv("GTE_E2E_KEEP_LOGS") == "1",
		control:    os.Getenv("GTE_E2E_CONTROL"),
		rbacDrop:   os.Getenv("GTE_E2E_RBAC_DROP"),
	}
	if s.control != "" && s.control != "noop" {
		return s, fmt.Errorf("GTE_E2E_CONTROL: unknown control %q (known: noop)", s.control)
	}
	for _, p := range []*string{&s.binDir, &s.extender, &s.policy, &s.topologies} {
		if *p, err = filepath.Abs(*p); err != nil {
			return s, err
		}
	}
	// The control replaces the extender, which the chart-identity mode runs as the chart renders it.
	defaultModes := "nodes,cache,chart-identity,chart-identity-standalone,ha,ha-sidecar"
	if s.control != "" {
		defaultModes = "nodes,cache"
	}
	s.modes, err = parseModes(envOr("GTE_E2E_MODES", defaultModes))
	return s, err
}

func parseModes(list string) ([]mode, error) {
	var out []mode
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		m, ok := modesByName[name]
		if !ok {
			return nil, fmt.Errorf("GTE_E2E_MODES: unknown mode %q (known: nodes, cache, chart-identity, chart-identity-standalone, ha, ha-sidecar)", name)
		}
		out = append(out, m)
	}
	return out, nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}
