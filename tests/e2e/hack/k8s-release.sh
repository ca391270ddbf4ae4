# Shared by hack/build-control-plane.sh and hack/build-kubectl.sh (sourced): where the build goes,
# the pinned Kubernetes release, the stamp that keys a cached build of it, and the version flags.
# shellcheck shell=bash

# Sets e2e_dir, repo_root and bin_dir (E2E_BIN_DIR, default <repo>/build/e2e-bin), finds Go, moves
# into the e2e module and sets the build environment.
enter_e2e_module() {
  e2e_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  repo_root=$(cd "$e2e_dir/../.." && pwd)
  bin_dir=${E2E_BIN_DIR:-$repo_root/build/e2e-bin}
  command -v go >/dev/null || export PATH="/usr/local/go/bin:$PATH"
  cd "$e2e_dir"
  # -buildvcs=false: the binaries need no VCS stamp, and stamping fails where git is missing.
  export GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0
}

# The release tests/e2e/go.mod pins, e.g. v1.37.2.
k8s_version() {
  go list -m -f '{{.Version}}' k8s.io/kubernetes
}

# Hash of the resolved module versions (so reformatting go.mod rebuilds nothing), of what the
# given command prints (sources of the build beyond the modules), and of the Go version.
build_stamp() {
  {
    go list -m -f '{{.Path}} {{.Version}}{{with .Replace}} => {{.Path}} {{.Version}}{{end}}' all
    "$@"
    go version
  } | sha256sum | cut -d' ' -f1
}

# -ldflags so a binary reports the release instead of v0.0.0-master.
version_ldflags() {
  local version=$1 minor=${1#v1.}
  minor=${minor%%.*}
  local pkg=k8s.io/component-base/version
  echo "-s -w -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
}
