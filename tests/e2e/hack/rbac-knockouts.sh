#!/usr/bin/env bash
# Shows that the e2e suite needs every RBAC grant the Helm chart renders: for each grant (one verb,
# one item of a rule, or a whole binding; cmd/rbac-knockouts lists them) it runs the
# chart-identity mode with that grant removed (GTE_E2E_RBAC_DROP) and prints which named tests
# failed. A grant whose removal fails nothing is one the chart does not need (or one no test
# exercises): the script then exits non-zero. Takes about 1-3 minutes per grant; not part of
# `make test` (docs/testing.md, "The chart-identity mode").
#
# Env: as run.sh (GTE_BINARY, E2E_BIN_DIR, GTE_HELM, ...); KNOCKOUTS="SPEC ..." runs only those;
# KNOCKOUT_MODE=chart-identity-standalone knocks out the grants of the chart's standalone layout
# (its leader-election Role) in that mode (default: chart-identity, the sidecar layout).
# Extra arguments go to run.sh (e.g. -run 'TestE2E/chart-identity/(burst|agent)').
set -euo pipefail

e2e_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
repo_root=$(cd "$e2e_dir/../.." && pwd)
command -v go >/dev/null || export PATH="/usr/local/go/bin:$PATH"
export GOFLAGS="-mod=mod -buildvcs=false"
helm=${GTE_HELM:-$repo_root/build/tools-bin/helm}

mode=${KNOCKOUT_MODE:-chart-identity}
case $mode in
  chart-identity) layout=() ;;
  chart-identity-standalone) layout=(--set layout=standalone) ;;
  *) echo "KNOCKOUT_MODE: chart-identity or chart-identity-standalone, not $mode" >&2 && exit 2 ;;
esac
if [[ -z ${KNOCKOUTS:-} ]]; then
  KNOCKOUTS=$(cd "$e2e_dir" && go run ./cmd/rbac-knockouts "$helm" "$repo_root/charts/gpu-topology-extender" "${layout[@]}")
fi

log=$(mktemp "${TMPDIR:-/tmp}/gte-rbac-knockout.XXXXXX")
trap 'rm -f "$log"' EXIT
unneeded=0
for spec in $KNOCKOUTS; do
  start=$SECONDS
  GTE_E2E_MODES=$mode GTE_E2E_RBAC_DROP=$spec "$e2e_dir/run.sh" "$@" >"$log" 2>&1 || true
  failed=$(grep -oE -- "--- FAIL: TestE2E/$mode/[^ ]+" "$log" | sed 's|.*/||' | tr '\n' ' ' || true)
  why=$(grep -m1 -oE "mode $mode: .*" "$log" | cut -c1-200 || true)
  if [[ -n $why ]]; then
    failed="every scenario ($why)"
  fi
  if [[ -z $failed ]]; then
    failed="NOTHING FAILED"
    unneeded=$((unneeded + 1))
  fi
  echo "$spec ($((SECONDS - start)) s): $failed"
done
((unneeded == 0))
