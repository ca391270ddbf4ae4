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
# A free loopback port.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
# serve_cluster_file BINARY FILE [ARGS...]: the extender on a free loopback port ($port) serving
# FILE, in the background ($pid, stopped by the cleanup), its log in $work/extender.log; returns
# once /readyz answers, fails the check when it exits first.
serve_cluster_file() {
  local binary=$1 file=$2
  shift 2
  port=$(free_port)
  "$binary" serve --listen "127.0.0.1:$port" --drain-period 0s --cluster-file "$file" "$@" \
    >"$work/extender.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && return 0
    kill -0 "$pid" 2>/dev/null || fail "the extender exited: $(tail -n 5 "$work/extender.log")"
    sleep 0.1
  done
  fail "the extender did not become ready on port $port"
}
