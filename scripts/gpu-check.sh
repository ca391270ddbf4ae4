#!/usr/bin/env bash
# make gpu-check: on a machine with an NVIDIA GPU and driver, builds the node agent if needed and
# runs one discovery + health pass on the real NVML (docs/agent.md, "Health"), printing what it
# found: the labels it would publish, each GPU's health with its reasons, and each NVLink's state
# and error counters. Nothing is written anywhere.
#   BUILD_DIR  the CMake build folder (build); configured and the agent built there when missing
#   NVML_LIB   the NVML library to load (libnvidia-ml.so.1, found like any shared library)
#   JOBS       build jobs
# Exit status: 0 the pass ran (whatever the health it found; see the summary line), 1 the agent
# failed (its message on stderr), 2 no NVIDIA driver or NVML library on this machine.
set -euo pipefail
repo_root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-build}
case $build_dir in /*) ;; *) build_dir="$repo_root/$build_dir" ;; esac
nvml_lib=${NVML_LIB:-libnvidia-ml.so.1}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

no_driver() {
  echo "gpu-check: $*" >&2
  echo "gpu-check: this needs a machine with an NVIDIA GPU and its driver (nvidia-smi should work);" \
    "nothing was checked" >&2
  exit 2
}

if [[ $nvml_lib != */* ]] && ! ldconfig -p 2>/dev/null | grep -q "[[:space:]]$nvml_lib[[:space:]]"; then
  no_driver "no $nvml_lib on this machine (ldconfig -p does not list it): the NVIDIA driver is not installed"
fi
if [[ $nvml_lib == */* && ! -r $nvml_lib ]]; then
  no_driver "NVML_LIB=$nvml_lib cannot be read"
fi
if [[ ! -e /proc/driver/nvidia/version && -z ${NVML_LIB:-} ]]; then
  no_driver "the NVIDIA kernel driver is not loaded (/proc/driver/nvidia/version is missing)"
fi

agent="$build_dir/bin/gpu-topology-agent"
if [[ ! -f $build_dir/build.ninja && ! -f $build_dir/Makefile ]]; then
  command -v cmake >/dev/null || { echo "gpu-check: cmake not found: run 'make deps' first" >&2; exit 1; }
  echo "gpu-check: configuring $build_dir" >&2
  cmake -S "$repo_root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
echo "gpu-check: building gpu-topology-agent in $build_dir" >&2
cmake --build "$build_dir" -j "$jobs" --target gpu-topology-agent >/dev/null

echo "gpu-check: $("$agent" version)"
if [[ -r /proc/driver/nvidia/version ]]; then
  echo "gpu-check: driver: $(head -n 1 /proc/driver/nvidia/version)"
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
"$agent" discover --nvml --nvml-lib "$nvml_lib" --health "$@" >"$out" || status=$?
if [[ $status != 0 ]]; then
  echo "gpu-check: the agent's discovery failed (exit $status; its message is above)" >&2
  exit 1
fi
echo "== labels (what the agent would publish)"
grep -v '^#' "$out"
echo "== health (one pass: rates need the daemon's window, XIDs only those during this pass)"
sed -n 's/^# //p' "$out"
health=$(sed -n 's/^[^=]*\/health=//p' "$out")
bad=$(printf '%s' "$health" | tr -d '1' | wc -c)
echo "gpu-check: ${#health} GPUs, $bad not healthy (health=$health; 1 healthy, d degraded, 0 failed)"
