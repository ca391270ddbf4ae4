#!/usr/bin/env bash
# Shows that scripts/check-self-contained.sh trips on each kind of reference it exists to catch,
# and passes a clean tree: a guard that never fails would let the repository drift silently.
# Builds throw-away repositories under a temp directory; the offending texts are assembled from
# pieces so that this file itself passes the guard.
set -euo pipefail

guard=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/check-self-contained.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

up='..''/'
failures=0

# new_repo DIR: a small clean repository with a doc, a test and a relative include that resolves.
new_repo() {
  mkdir -p "$1/docs" "$1/tests/unit" "$1/tests/data"
  printf '# Guide\nSee [the API](api.md) and docs/api.md.\n' >"$1/docs/guide.md"
  printf '# API\n' >"$1/docs/api.md"
  printf '#include "%sdata/fixture.h"\n' "$up" >"$1/tests/unit/a_test.cpp"
  printf '// fixture\n' >"$1/tests/data/fixture.h"
  if command -v git >/dev/null; then
    git -C "$1" init -q
    git -C "$1" add -A
  fi
}

# expect RESULT NAME TEXT: writes TEXT into tests/unit/b_test.cpp of a fresh repository and checks
# that the guard passes (RESULT=pass) or fails naming that file (RESULT=fail).
expect() {
  local want=$1 name=$2 text=$3 repo out rc
  repo=$work/$name
  new_repo "$repo"
  printf '%s\n' "$text" >"$repo/tests/unit/b_test.cpp"
  set +e
  out=$("$guard" "$repo" 2>&1)
  rc=$?
  set -e
  if [[ $want == pass && $rc -ne 0 ]]; then
    echo "FAIL $name: guard rejected a clean tree:"
    echo "$out"
    failures=$((failures + 1))
  elif [[ $want == fail && ($rc -eq 0 || $out != *tests/unit/b_test.cpp:1:*) ]]; then
    echo "FAIL $name: guard did not report tests/unit/b_test.cpp (rc=$rc):"
    echo "$out"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

expect pass clean '// reads tests/data through GTE_TEST_DATA_DIR'
expect fail sibling-folder "const char* kDir = \"${up}${up}${up}sha""red/data/topologies\";"
expect fail sibling-name "// captures: see sha""red/reference/notes"
expect fail escapes-root "const char* kDir = \"${up}${up}${up}${up}outside/file\";"
expect fail dangling-relative "const char* kDir = \"${up}missing/dir\";"
expect fail missing-markdown "// rule from gpu-topology.""md section 2"
expect fail missing-doc-path "// see docs/no-such-page.""md"
expect fail anchor-wording "// (design"" anchor 3)"

if ((failures > 0)); then
  echo "check-self-contained-test: $failures case(s) failed"
  exit 1
fi
echo "check-self-contained-test: all cases behave"
