# Shared by the tests/ops checks: where the tools are, and how to fail with one clear line.
# shellcheck shell=bash
set -euo pipefail
ops_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$ops_dir/../.." && pwd)
chart="$repo_root/charts/gpu-topology-extender"
helm_bin=${HELM:-${HELM_BIN_DIR:-$repo_root/build/tools-bin}/helm}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
need() {
  command -v "$1" >/dev/null || [[ -x $1 ]] || fail "$1 not found (scripts/install-deps.sh installs promtool; scripts/build-helm.sh builds helm)"
}
# helm template with the given extra arguments, into a file; fails the test if helm fails.
render() {
  local out=$1
  shift
  "$helm_bin" template gte "$chart" --namespace gpu-system "$@" >"$out" ||
    fail "helm template $* failed"
}
# A scratch folder for the check, and the background process it may start (its pid in $pid):
# both are gone when the check exits, however it exits.
work=$(mktemp -d)
pid=""
cleanup() {
  [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
# A free loopback port (the extender's --listen takes no port 0).
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
