#!/usr/bin/env bash
# Builds kube-apiserver, kube-scheduler and the embedded etcd at the release pinned in
# tests/e2e/go.mod, into a cache directory that later runs reuse.
#
# The cache is keyed on the resolved module versions (so reformatting go.mod does not rebuild), the
# etcd wrapper's source and the Go version: if none of them changed, nothing is built. All three binaries come from ONE `go build` so the packages they share
# (most of apiserver, client-go, apimachinery) compile once.
#
# Env: E2E_BIN_DIR  output directory (default <repo>/build/e2e-bin)
#      E2E_REBUILD=1 ignore the cache stamp
set -euo pipefail

# shellcheck source=k8s-release.sh
source "$(dirname "${BASH_SOURCE[0]}")/k8s-release.sh"
enter_e2e_module
version=$(k8s_version)
stamp=$(build_stamp cat cmd/etcd/*.go)

if [[ ${E2E_REBUILD:-0} != 1 && -f $bin_dir/.stamp && $(cat "$bin_dir/.stamp") == "$stamp" ]] &&
  [[ -x $bin_dir/kube-apiserver && -x $bin_dir/kube-scheduler && -x $bin_dir/etcd ]]; then
  echo "control plane $version: cached in $bin_dir"
  exit 0
fi

# Version stamping so the binaries report the pinned release instead of v0.0.0-master.
ldflags=$(version_ldflags "$version")

echo "control plane $version: building into $bin_dir (first build takes a while)"
mkdir -p "$bin_dir"
rm -f "$bin_dir/.stamp"
start=$SECONDS
go build -trimpath -ldflags="$ldflags" -o "$bin_dir/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-scheduler \
  ./cmd/etcd
echo "$stamp" >"$bin_dir/.stamp"
echo "control plane $version: built in $((SECONDS - start))s"
