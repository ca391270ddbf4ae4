#!/usr/bin/env bash
# Builds helm from its Go module at the pinned version into a cache directory that later runs
# reuse (like tests/e2e/hack/build-control-plane.sh). `make test` lints and renders the chart with
# it, so a chart that helm rejects fails the suite.
#
# Env: HELM_BIN_DIR  output directory (default <repo>/build/tools-bin)
#      HELM_VERSION  module version (default below; change it here, not per machine)
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin_dir=${HELM_BIN_DIR:-$repo_root/build/tools-bin}
# `go install` accepts only an absolute GOBIN; callers may pass a path relative to their cwd.
mkdir -p "$bin_dir"
bin_dir=$(cd "$bin_dir" && pwd)
version=${HELM_VERSION:-v4.3.2}
command -v go >/dev/null || export PATH="/usr/local/go/bin:$PATH"
if ! command -v go >/dev/null; then
  echo "build-helm: no Go toolchain found" >&2
  exit 1
fi

stamp="$version $(go version)"
if [[ -x $bin_dir/helm && -f $bin_dir/.helm-stamp && $(cat "$bin_dir/.helm-stamp") == "$stamp" ]]; then
  echo "helm $version: cached in $bin_dir"
  exit 0
fi
echo "helm $version: building into $bin_dir (first build takes a few minutes)"
mkdir -p "$bin_dir"
start=$SECONDS
# `go install pkg@version` builds outside any module, with helm's own go.mod and go.sum.
GOBIN="$bin_dir" GOFLAGS="-buildvcs=false" CGO_ENABLED=0 \
  go install -trimpath -ldflags "-s -w" "helm.sh/helm/v4/cmd/helm@$version"
echo "$stamp" >"$bin_dir/.helm-stamp"
echo "helm $version: built in $((SECONDS - start))s"
