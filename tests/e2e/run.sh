#!/usr/bin/env bash
# Runs the end-to-end tests: real etcd + kube-apiserver + kube-scheduler, the extender under test.
#
# Needs the extender already built (build/bin/gpu-topology-extender, or GTE_BINARY). Builds the
# control plane on first use (cached in build/e2e-bin, see hack/build-control-plane.sh). Prints
#   E2E: N passed, M failed
# counting one result per (mode, scenario) subtest, and exits non-zero if anything failed.
#
# Env: GTE_BINARY, GTE_POLICY, GTE_E2E_MODES (nodes,cache,chart-identity,chart-identity-standalone,ha,
#      ha-sidecar),
#      GTE_E2E_KEEP_LOGS=1, GTE_E2E_FAILOVER_KILLS (ha mode: kills per failover scenario, default 1),
#      E2E_BIN_DIR, E2E_K8S_VERSION (another release's control plane, see below), GTE_HELM, GTE_AGENT_BINARY, GTE_FAKE_NVML, E2E_KUBECTL (the kubectl plugin
#      scenario's kubectl; unset: hack/build-kubectl.sh builds one); extra arguments are passed to
#      `go test` (e.g. -run 'TestE2E/nodes/').
#
# GTE_E2E_RBAC_DROP=GRANT removes one grant from the chart's RBAC in the chart-identity mode, to
# show which test needs it (hack/rbac-knockouts.sh runs every one). Not part of `make test`.
#
# GTE_E2E_CONTROL=noop runs the placement scenarios against a GPU-blind no-op extender instead of
# the extender under test, to show that none of them can pass by luck: the run succeeds when every
# one of them FAILS (docs/testing.md, "Control mode"). Not part of `make test`.
set -euo pipefail

e2e_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$e2e_dir/../.." && pwd)
command -v go >/dev/null || export PATH="/usr/local/go/bin:$PATH"
if ! command -v go >/dev/null; then
  echo "e2e: no Go toolchain found (needs Go >= 1.26, the version tests/e2e/go.mod names)" >&2
  echo "E2E: 0 passed, 1 failed"
  exit 1
fi
export GOFLAGS="-mod=mod -buildvcs=false"

control=${GTE_E2E_CONTROL:-}
extender=${GTE_BINARY:-$repo_root/build/bin/gpu-topology-extender}
if [[ -z $control && ! -x $extender ]]; then
  echo "e2e: extender not found at $extender; build it first (or set GTE_BINARY)" >&2
  echo "E2E: 0 passed, 1 failed"
  exit 1
fi

# E2E_K8S_VERSION=v1.34.4: the control plane of that release instead of the pinned one (the version
# matrix, `make e2e-matrix`); the suite and its client stay at the pinned release.
if [[ -n ${E2E_K8S_VERSION:-} ]]; then
  "$e2e_dir/hack/build-control-plane-at.sh" "$E2E_K8S_VERSION"
  export E2E_BIN_DIR=${E2E_MATRIX_DIR:-$repo_root/build/e2e-matrix}/$E2E_K8S_VERSION/bin
else
  "$e2e_dir/hack/build-control-plane.sh"
  "$e2e_dir/hack/build-kubectl.sh"
fi

out=$(mktemp "${TMPDIR:-/tmp}/gte-e2e-output.XXXXXX")
trap 'rm -f "$out"' EXIT

cd "$e2e_dir"
set +e
go test -count=1 -v -timeout 40m ./... "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
set -e

# Scenario results are the third level: TestE2E/<mode>/<scenario>.
scenario_line='^[[:space:]]*--- %s: TestE2E/[^/[:space:]]+/[^/[:space:]]+ '
passed=$(grep -cE "$(printf "$scenario_line" PASS)" "$out" || true)
failed=$(grep -cE "$(printf "$scenario_line" FAIL)" "$out" || true)
scenarios_failed=$failed
# A failure outside any scenario (control plane did not start, a unit test of the harness failed,
# a timeout) still has to show up in the count.
if ((rc != 0 && failed == 0)); then
  failed=1
fi
# `make demo`'s story (tests/e2e/internal/demo), after the scenarios: it starts a control plane of
# its own, so it does not run beside them. One more result; not with a control extender or a
# scenario filter (-run).
if [[ -z $control && " $* " != *" -run "* && $* != *-run=* ]]; then
  if GTE_DEMO_TEST=1 go test -count=1 -v -timeout 10m -run '^TestStory$' ./internal/demo/ 2>&1 |
    tee "$out.demo" | grep -E '^(---|ok|FAIL|PASS)'; then :; fi
  if grep -q -- '--- PASS: TestStory' "$out.demo"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    sed -n '1,200p' "$out.demo"
  fi
  rm -f "$out.demo"
fi
if ((rc != 0)) && [[ -z $control ]]; then
  "$e2e_dir/hack/failed-tests.sh" "$out"
fi
echo "E2E: $passed passed, $failed failed"
if [[ -n $control ]]; then
  # Inverted: a placement scenario that passes against the blind control could pass by luck.
  echo "E2E control ($control): $scenarios_failed placement scenario(s) failed as they must, $passed passed"
  if ((passed == 0 && scenarios_failed > 0)); then exit 0; fi
  exit 1
fi
((rc == 0 && failed == 0))
