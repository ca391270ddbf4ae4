#!/usr/bin/env bash
# Clang's thread-safety analysis over every translation unit of src/ (docs/testing.md, "Thread
# safety"): each file is checked with clang++-16 -Wthread-safety -Werror -fsyntax-only and the
# flags of its entry in <build>/compile_commands.json (the GCC build's), so nothing is built and
# no second build tree is needed. Proves at compile time that every member declared
# GTE_GUARDED_BY(m) is touched only with m held (src/base/thread_annotations.h). The fuzz build
# (make fuzz, clang) checks the same on the code its targets link; this covers all of src/.
#
# Usage: scripts/check-thread-safety.sh [BUILD_DIR]   (default build; run `make configure` first)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
clang=${CLANG:-clang++-16}
command -v "$clang" >/dev/null || {
  echo "check-thread-safety: $clang not found (scripts/install-fuzz-deps.sh installs it)" >&2
  exit 1
}
[[ -f $build/compile_commands.json ]] || {
  echo "check-thread-safety: no $build/compile_commands.json (configure the build first)" >&2
  exit 1
}
commands=$(mktemp)
trap 'rm -f "$commands"' EXIT
# One NUL-separated shell command per src/ file: its compile command with clang, no output file.
python3 - "$build/compile_commands.json" "$root/src/" "$clang" >"$commands" <<'PY'
import json, shlex, sys
db, prefix, clang = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
seen = set()
for entry in db:
    if not entry["file"].startswith(prefix) or entry["file"] in seen:
        continue
    seen.add(entry["file"])
    args, out, skip = shlex.split(entry["command"])[1:], [], False
    for a in args:
        if skip:
            skip = False
        elif a == "-o":
            skip = True
        elif a not in ("-c", "-Wno-tsan"):
            out.append(a)
    cmd = [clang] + out + ["-Wthread-safety", "-Werror", "-fsyntax-only"]
    sys.stdout.write("cd " + shlex.quote(entry["directory"]) + " && " + shlex.join(cmd) + "\0")
PY
total=$(tr -cd '\0' <"$commands" | wc -c)
echo "check-thread-safety: $total translation units of src/ with $clang -Wthread-safety"
if xargs -0 -P "$(nproc)" -n 1 bash -c <"$commands"; then
  echo "check-thread-safety: $total passed"
else
  echo "check-thread-safety: failed (the errors above name the file, the member and its mutex)" >&2
  exit 1
fi
