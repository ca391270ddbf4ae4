#!/usr/bin/env bash
# The version matrix: the end-to-end suite against the control plane of every release in
# matrix_releases (hack/k8s-release.sh) and the pinned one, each built once and cached
# (hack/build-control-plane-at.sh). Prints one line per release and exits non-zero if any failed.
#
#   tests/e2e/hack/run-matrix.sh                    # every release, the whole suite
#   tests/e2e/hack/run-matrix.sh v1.34.4 v1.37.2    # these releases
#   GTE_E2E_MODES=cache tests/e2e/hack/run-matrix.sh -- -run 'TestE2E/cache/'
#
# Arguments after `--` go to run.sh (and on to go test). Takes about as long as `make e2e` per
# release, plus about 4 minutes to build each release the first time.
set -euo pipefail
hack_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=k8s-release.sh
source "$hack_dir/k8s-release.sh"

releases=()
while (($#)) && [[ $1 != -- ]]; do
  releases+=("$1")
  shift
done
[[ ${1:-} == -- ]] && shift
pinned=$(enter_e2e_module && k8s_version)
if ((${#releases[@]} == 0)); then
  read -ra releases <<<"$(matrix_releases)"
  releases+=("$pinned")
fi

summary=()
failed=0
for release in "${releases[@]}"; do
  log=$(mktemp "${TMPDIR:-/tmp}/gte-e2e-matrix.XXXXXX")
  echo "=== Kubernetes $release"
  set +e
  # The pinned release is the suite's own control plane (build/e2e-bin).
  at=$release
  [[ $release == "$pinned" ]] && at=
  E2E_K8S_VERSION=$at "$hack_dir/../run.sh" "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  line=$(grep -E '^E2E: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n1)
  skipped=$(grep -cE '^[[:space:]]*--- SKIP: TestE2E/[^/[:space:]]+/[^/[:space:]]+ ' "$log" || true)
  rm -f "$log"
  summary+=("$release: ${line#E2E: }${line:+, }$skipped skipped")
  ((rc == 0)) || failed=1
done
echo "=== version matrix"
printf '%s\n' "${summary[@]}"
exit "$failed"
