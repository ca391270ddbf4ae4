#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer targets (CMake preset `fuzz`: clang, ASan + UBSan, build-fuzz/)
# and runs each for a bounded time from its committed seeds (fuzz/corpus/<target>) with its
# dictionary (fuzz/dict/<target>.dict). Fails if any target finds a crash, a leak, undefined
# behaviour, a broken invariant, an input slower than FUZZ_INPUT_TIMEOUT seconds or one that needs
# more than FUZZ_RSS_MB of memory; the input is left under build-fuzz/fuzz-run/<target>/.
#   FUZZ_SECONDS   seconds per target (default 60)
#   FUZZ_INPUT_TIMEOUT  seconds one input may take (default 10; node_labels and verbs:
#                  FUZZ_SLOW_INPUT_TIMEOUT, default 60, see docs/testing.md, "Open findings")
#   FUZZ_TARGETS   space-separated subset (default: all)
#   JOBS           build parallelism
set -euo pipefail

cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_TARGETS=${FUZZ_TARGETS:-"verbs quantity node_labels policy_yaml cluster_file kubeconfig watch_stream whatif dra_objects dra_taint_rules group_owners companion_slice device_plugin_config"}
FUZZ_INPUT_TIMEOUT=${FUZZ_INPUT_TIMEOUT:-10}
FUZZ_SLOW_INPUT_TIMEOUT=${FUZZ_SLOW_INPUT_TIMEOUT:-60}
FUZZ_RSS_MB=${FUZZ_RSS_MB:-2048}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
BUILD_DIR=build-fuzz  # the preset's binaryDir
RUN_DIR=$BUILD_DIR/fuzz-run

launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake --preset fuzz "${launcher[@]}" >/dev/null
targets=()
for t in $FUZZ_TARGETS; do targets+=("fuzz_$t"); done
cmake --build --preset fuzz -j "$JOBS" --target "${targets[@]}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp}
# llvm-symbolizer (package llvm-16) turns the findings' stack traces into file:line.
export PATH=/usr/lib/llvm-16/bin:$PATH
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

# A 16-GPU node of unknown topology takes seconds to build under ASan at -O1 (the device plugin's
# pick replayed for every request size; about 40 ms in a release build), a known cost with its own
# fix: the targets that build node states get more time per input, so that every run does not stop
# at the first such node. An endless loop still fails them.
inputTimeout() {
  case "$1" in
    node_labels | verbs) echo "$FUZZ_SLOW_INPUT_TIMEOUT" ;;
    *) echo "$FUZZ_INPUT_TIMEOUT" ;;
  esac
}

failed=0
summary=$(printf '%-12s %7s %12s  %s' target seconds execs result)
for t in $FUZZ_TARGETS; do
  work=$RUN_DIR/$t
  rm -rf "$work/artifacts"
  mkdir -p "$work/corpus" "$work/artifacts"
  dict=()
  if [ -f "fuzz/dict/$t.dict" ]; then dict=(-dict="fuzz/dict/$t.dict"); fi
  echo "== fuzz_$t for ${FUZZ_SECONDS}s"
  start=$(date +%s)
  rc=0
  # The first corpus directory collects what the run finds; the committed seeds are read only.
  "$BUILD_DIR/bin/fuzz_$t" -max_total_time="$FUZZ_SECONDS" -timeout="$(inputTimeout "$t")" \
    -rss_limit_mb="$FUZZ_RSS_MB" -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
    "${dict[@]}" "$work/corpus" "fuzz/corpus/$t" >"$work/log" 2>&1 || rc=$?
  seconds=$(($(date +%s) - start))
  execs=$(awk '/stat::number_of_executed_units:/ {print $2}' "$work/log" | tail -n1)
  artifacts=$(find "$work/artifacts" -type f | sort)
  if [ "$rc" -eq 0 ] && [ -z "$artifacts" ]; then
    result=ok
  else
    result="FAILED (exit $rc)"
    failed=1
    tail -n 40 "$work/log"
    for a in $artifacts; do echo "finding: $a"; done
  fi
  summary+=$(printf '\n%-12s %7s %12s  %s' "$t" "$seconds" "${execs:-?}" "$result")
done

echo
echo "$summary"
exit "$failed"
