#!/usr/bin/env bash
# Builds kubectl at the release pinned in tests/e2e/go.mod into the control plane's cache directory,
# for the kubectl plugin scenario (kubectl_plugin_test.go), which runs `kubectl gpu-topology` the
# way an admin does. Separate from build-control-plane.sh so that adding it does not rebuild a
# cached control plane; the same kind of stamp (module versions and Go version) keeps it cached.
#
# Env: E2E_BIN_DIR  output directory (default <repo>/build/e2e-bin)
#      E2E_KUBECTL  a kubectl to use instead: nothing is built
#      E2E_REBUILD=1 ignore the cache stamp
set -euo pipefail

if [[ -n ${E2E_KUBECTL:-} ]]; then
  echo "kubectl: using E2E_KUBECTL=$E2E_KUBECTL"
  exit 0
fi
# shellcheck source=k8s-release.sh
source "$(dirname "${BASH_SOURCE[0]}")/k8s-release.sh"
enter_e2e_module
version=$(k8s_version)
stamp=$(build_stamp true)
if [[ ${E2E_REBUILD:-0} != 1 && -x $bin_dir/kubectl && -f $bin_dir/.kubectl-stamp &&
  $(cat "$bin_dir/.kubectl-stamp") == "$stamp" ]]; then
  echo "kubectl $version: cached in $bin_dir"
  exit 0
fi
ldflags=$(version_ldflags "$version")
echo "kubectl $version: building into $bin_dir"
mkdir -p "$bin_dir"
rm -f "$bin_dir/.kubectl-stamp"
start=$SECONDS
go build -trimpath -ldflags="$ldflags" -o "$bin_dir/kubectl" k8s.io/kubernetes/cmd/kubectl
echo "$stamp" >"$bin_dir/.kubectl-stamp"
echo "kubectl $version: built in $((SECONDS - start))s"
