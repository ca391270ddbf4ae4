#!/usr/bin/env bash
# Prints, for each test that failed in a `go test -v` log, its name and the last lines it logged,
# so that a run's closing lines say which scenario failed and why: a CI page that keeps only a log's
# head and tail then still shows it (the go summary tree sits in the middle of a long run).
# Usage: failed-tests.sh LOG [LINES]   (LINES logged per test, default 25). Prints nothing when no
# test failed.
set -euo pipefail
log=$1
keep=${2:-25}
[[ -r $log ]] || exit 0
awk -v keep="$keep" '
  # Which test the lines that follow belong to: go -v names it when it starts or resumes one.
  /^=== (RUN|NAME|CONT)[[:space:]]/ { current = $3; next }
  /^[[:space:]]*--- FAIL: / {
    name = $3
    if (!(name in failed)) { failed[name] = 1; order[++n] = name }
    current = ""
    next
  }
  /^[[:space:]]*--- (PASS|SKIP): / { current = ""; next }
  current != "" {
    count[current]++
    line[current, count[current]] = $0
  }
  END {
    for (i = 1; i <= n; i++) {
      name = order[i]
      # A parent fails with its failed child; the child has the reasons.
      child = 0
      for (j = 1; j <= n; j++) if (index(order[j], name "/") == 1) child = 1
      if (child) continue
      print "e2e: FAILED " name
      first = count[name] > keep ? count[name] - keep + 1 : 1
      for (k = first; k <= count[name]; k++) print "    | " line[name, k]
    }
  }
' "$log"
