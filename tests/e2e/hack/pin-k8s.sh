#!/usr/bin/env bash
# Pins the e2e module to one Kubernetes release.
#
# go.mod is the single place the release is recorded: the `k8s.io/kubernetes vX.Y.Z` requirement.
# k8s.io/kubernetes requires its staging modules (k8s.io/api, k8s.io/client-go, ...) at v0.0.0 and
# replaces them with ./staging directories, which a dependent module cannot see. Every such module
# therefore needs a replace directive pointing at the matching published v0.Y.Z tag. This script
# derives that list from the release's own go.mod, so go.mod never has to be edited by hand.
#
# Usage: tests/e2e/hack/pin-k8s.sh v1.37.2
set -euo pipefail

# shellcheck source=k8s-release.sh
source "$(dirname "${BASH_SOURCE[0]}")/k8s-release.sh"
enter_e2e_module

version=${1:?usage: $0 v1.MINOR.PATCH}
[[ $version =~ ^v1\.[0-9]+\.[0-9]+$ ]] || { echo "pin-k8s: want v1.MINOR.PATCH, got $version" >&2; exit 2; }
staging="v0.${version#v1.}"

# Drop replaces from a previous pin, then add the current ones.
go mod edit -json | sed -n 's/^[[:space:]]*"Path": "\(k8s\.io\/[^"]*\)"$/\1/p' | sort -u |
  while read -r m; do go mod edit -dropreplace="$m" 2>/dev/null || true; done
replaces=$(staging_replaces "$version")
printf '\n%s\n' "$replaces" >>go.mod
go mod edit -require="k8s.io/kubernetes@$version"
go get -tool "k8s.io/kubernetes/cmd/kube-apiserver@$version" "k8s.io/kubernetes/cmd/kube-scheduler@$version"
go mod tidy
# Requirements that tidy copied from k8s.io/kubernetes say v0.0.0; write the version actually used.
go list -m -f '{{if and (not .Main) (eq .Version "v0.0.0")}}{{.Path}}{{end}}' all |
  while read -r m; do go mod edit -require="$m@$staging"; done
go mod tidy
echo "pinned k8s.io/kubernetes $version (staging modules at $staging)"
