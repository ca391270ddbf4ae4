#!/usr/bin/env bash
# Checks the container image that scripts/build-image.sh built (make image-test; docs/testing.md,
# "Container image"). Needs root and buildah/podman; no container runtime daemon, no registry.
#
#   tests/image/check-image.sh [IMAGE]     default localhost/gpu-topology-extender:<version>
#
# What it proves, step by step:
#  1. the image configuration: a numeric non-root USER (kubelet's runAsNonRoot can only verify a
#     numeric one), the extender as ENTRYPOINT, the default CMD, port 8888, MALLOC_ARENA_MAX;
#  2. the files: both binaries, the kubectl plugin and the default policy present, owned by root
#     and not writable by the image's user;
#  3. as a container (`buildah run`, which applies the image's USER): the process is that user,
#     the chart's preStop command (`sleep`) exists, the kubectl plugin's --help runs under the
#     image's /bin/sh, and `gpu-topology-agent version` runs (its shared libraries resolve);
#  4. the extender as Kubernetes runs it with the chart's readOnlyRootFilesystem: in its own mount
#     namespace, the image's root file system mounted read-only, an empty tmpfs on /tmp (the
#     chart's emptyDir), proc and a minimal /dev, chrooted, as the image's USER with the image's
#     environment, with the image's ENTRYPOINT and the chart's flags (without --in-cluster: no
#     cluster here, so decisions come from the Nodes in each request). It must become ready and
#     answer /healthz, /readyz, /metrics, /version and a filter request; the kernel must report it
#     running as that user with no effective capabilities on a read-only root; /tmp must still be
#     empty afterwards (it writes nothing at all); SIGTERM must end it with status 0.
# It prints the image size and the time from start to the first 200 from /readyz.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
version=$(sed -n 's/^project(gpu-topology-extender VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")
image=${1:-localhost/gpu-topology-extender:$version}

failures=0
pass() { printf 'ok    %s\n' "$*"; }
fail() { printf 'FAIL  %s\n' "$*"; failures=$((failures + 1)); }
check() { # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}

[ "$(id -u)" -eq 0 ] || { echo "check-image: must run as root (buildah, mount namespaces)" >&2; exit 1; }
podman image exists "$image" || { echo "check-image: no image $image (run make image)" >&2; exit 1; }

container=""
mountpoint=""
server_pid=""
work=$(mktemp -d)
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -KILL "$server_pid" 2>/dev/null || true
  fi
  if [ -n "$container" ]; then
    buildah umount "$container" >/dev/null 2>&1 || true
    buildah rm "$container" >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

inspect() { podman image inspect --format "$1" "$image"; }

# 1. Configuration.
user=$(inspect '{{.Config.User}}')
uid=${user%%:*}
gid=${user#*:}
[ "$gid" != "$user" ] || gid=$uid
check "USER is numeric and not root ($user)" bash -c "[[ '$uid' =~ ^[0-9]+$ && '$gid' =~ ^[0-9]+$ && '$uid' -ne 0 ]]"
check "ENTRYPOINT is the extender" \
  test "$(inspect '{{json .Config.Entrypoint}}')" = '["/usr/local/bin/gpu-topology-extender"]'
check "CMD serves on 0.0.0.0:8888 in-cluster with the built-in policy file" \
  test "$(inspect '{{json .Config.Cmd}}')" = \
  '["serve","--listen","0.0.0.0:8888","--in-cluster","--policy","/etc/gpu-topology-extender/scheduler-policy.yaml"]'
check "port 8888 exposed" grep -q '8888/tcp' <<<"$(inspect '{{json .Config.ExposedPorts}}')"
mapfile -t image_env < <(inspect '{{range .Config.Env}}{{println .}}{{end}}' | sed '/^$/d')
check "MALLOC_ARENA_MAX=2 in the environment" grep -qx 'MALLOC_ARENA_MAX=2' <<<"$(printf '%s\n' "${image_env[@]}")"

# 2. Files.
container=$(buildah from --pull=never "$image")
mountpoint=$(buildah mount "$container")
for f in usr/local/bin/gpu-topology-extender usr/local/bin/gpu-topology-agent \
  usr/local/bin/kubectl-gpu_topology etc/gpu-topology-extender/scheduler-policy.yaml; do
  owner=$(stat -c '%u %a' "$mountpoint/$f" 2>/dev/null || echo missing)
  check "/$f present, owned by root, not writable by group or others ($owner)" \
    bash -c "[[ '$owner' =~ ^0\ [0-7][0145][0145]$ ]]"
done

# 3. As a container: buildah applies USER.
check "a container process runs as uid $uid" \
  test "$(buildah run --isolation chroot "$container" -- id -u)" = "$uid"
check "the chart's preStop command runs in the image (sleep 0)" \
  buildah run --isolation chroot "$container" -- sleep 0
plugin_help=$(buildah run --isolation chroot "$container" -- /usr/local/bin/kubectl-gpu_topology --help || true)
check "the kubectl plugin runs in the image (--help)" grep -q '^Usage: kubectl gpu-topology' <<<"$plugin_help"
agent_version=$(buildah run --isolation chroot "$container" -- /usr/local/bin/gpu-topology-agent version || true)
check "gpu-topology-agent runs in the image ($agent_version)" grep -q "^gpu-topology-agent $version" <<<"$agent_version"

# 4. The extender on a read-only root.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
metrics_port=$(free_port)
entrypoint=$(inspect '{{index .Config.Entrypoint 0}}')
started=$(date +%s%N)
# unshare and sh exec in place, so $! is the extender's pid once chroot has exec'd it.
unshare --mount --propagation private -- sh -c '
  set -e
  r=$1 user=$2
  shift 2
  mount --bind "$r" "$r"
  mount -o remount,bind,ro "$r"
  mount -t proc proc "$r/proc"
  mount -t tmpfs -o nosuid,noexec,mode=755 tmpfs "$r/dev"
  for d in null zero random urandom; do touch "$r/dev/$d"; mount --bind "/dev/$d" "$r/dev/$d"; done
  mount -t tmpfs -o nosuid,nodev,mode=1777,size=16m tmpfs "$r/tmp"
  exec chroot --userspec="$user" "$r" "$@"
' sh "$mountpoint" "$uid:$gid" /usr/bin/env -i "${image_env[@]}" "$entrypoint" serve \
  --listen "127.0.0.1:$port" --metrics-listen "127.0.0.1:$metrics_port" \
  --policy /etc/gpu-topology-extender/scheduler-policy.yaml --drain-period 1s \
  >"$work/extender.log" 2>&1 &
server_pid=$!

ready_ms=""
for _ in $(seq 1 300); do
  if curl -fs -o /dev/null "http://127.0.0.1:$metrics_port/readyz"; then
    ready_ms=$((($(date +%s%N) - started) / 1000000))
    break
  fi
  kill -0 "$server_pid" 2>/dev/null || break
  sleep 0.02
done
check "ready (GET /readyz 200) on a read-only root${ready_ms:+ after $ready_ms ms}" test -n "$ready_ms"
if [ -z "$ready_ms" ]; then
  sed 's/^/  extender: /' "$work/extender.log"
  echo "$failures check(s) failed"
  exit 1
fi

get() { curl -fsS "http://127.0.0.1:$1$2"; }
ok200() { curl -fsS -o /dev/null "http://127.0.0.1:$1$2"; }
check "GET /healthz 200 on both ports" bash -c "$(declare -f ok200); ok200 $port /healthz && ok200 $metrics_port /healthz"
check "GET /readyz 200 on the main port" ok200 "$port" /readyz
metrics=$(get "$metrics_port" /metrics || true)
check "GET /metrics serves the exposition with build info" grep -q "^gpu_topology_extender_build_info{.*version=\"$version\"" <<<"$metrics"
check "GET /version names $version" grep -q "\"$version\"" <<<"$(get "$port" /version || true)"
filter_body='{"Pod":{"metadata":{"name":"p","namespace":"ml","uid":"u"},"spec":{"containers":[{"name":"c","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},"Nodes":{"metadata":{},"items":[{"metadata":{"name":"n1","labels":{"gputopo.dev/v":"1","gputopo.dev/n":"2"}},"status":{"allocatable":{"nvidia.com/gpu":"2"}}}]},"NodeNames":null}'
filter=$(curl -fsS -H 'Content-Type: application/json' -d "$filter_body" "http://127.0.0.1:$port/scheduler/filter" || true)
check "POST /scheduler/filter decides (node n1 kept for a 1-GPU pod)" \
  grep -qF '{"Nodes":{"metadata":{},"items":[{"metadata":{"name":"n1"' <<<"$filter"

status=$(cat "/proc/$server_pid/status")
check "the kernel reports uid $uid (real, effective, saved, fs)" grep -qP "^Uid:\t$uid\t$uid\t$uid\t$uid$" <<<"$status"
check "the kernel reports gid $gid" grep -qP "^Gid:\t$gid\t$gid\t$gid\t$gid$" <<<"$status"
check "no supplementary groups but gid $gid" grep -qP "^Groups:\t($gid)? *$" <<<"$status"
check "no effective capabilities" grep -qP '^CapEff:\t0+$' <<<"$status"
root_mount=$(awk '$5 == "/" {print $6}' "/proc/$server_pid/mountinfo")
check "its root file system is mounted read-only ($root_mount)" grep -q '^ro\(,\|$\)' <<<"$root_mount"
check "it wrote nothing to /tmp" test -z "$(ls -A "/proc/$server_pid/root/tmp")"

kill -TERM "$server_pid"
rc=0
wait "$server_pid" || rc=$?
server_pid=""
check "SIGTERM: drained and exited 0" test "$rc" -eq 0
check "no error or warning logged" bash -c "! grep -E 'level=(error|warn)' '$work/extender.log'"

size=$(inspect '{{.Size}}')
echo "image $image: $((size / 1000000)) MB unpacked; ready $ready_ms ms after start"
if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all image checks passed"
