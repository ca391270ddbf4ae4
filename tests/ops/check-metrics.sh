#!/usr/bin/env bash
# Scrapes a running extender after known traffic and checks the exposition with
# `promtool check metrics`; then checks that every PromQL expression of the Grafana dashboard and
# of the chart's alerts parses (promtool) and names only metrics the extender exports.
# Usage: check-metrics.sh PATH/TO/gpu-topology-extender
source "$(dirname "$0")/ops_lib.sh"
binary=${1:?usage: check-metrics.sh EXTENDER_BINARY}
need "$binary"
need promtool
need curl
need "$helm_bin"

port=$(free_port)
"$binary" serve --listen "127.0.0.1:$port" --policy "$repo_root/config/scheduler-policy.yaml" \
  --cluster-file "$repo_root/tests/golden/cluster.yaml" >"$work/extender.log" 2>&1 &
pid=$!
base="http://127.0.0.1:$port"
for _ in $(seq 1 100); do
  curl -fsS "$base/readyz" >/dev/null 2>&1 && break
  kill -0 "$pid" 2>/dev/null || fail "the extender exited: $(tail -n 5 "$work/extender.log")"
  sleep 0.1
done
curl -fsS "$base/readyz" >/dev/null || fail "the extender did not become ready"

# Known traffic: each verb on a golden request, one malformed body, one explain.
cases="$repo_root/tests/golden/cases"
post() { curl -sS -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data-binary "$2" "$base/scheduler/$1"; }
for verb_case in filter:filter-names-4gpu prioritize:prioritize-names-1gpu preempt:preempt-names-8gpu bind:bind-names-ok; do
  verb=${verb_case%%:*}
  code=$(post "$verb" "@$cases/${verb_case#*:}.request.json")
  [[ $code == 200 ]] || fail "$verb answered HTTP $code"
done
post filter '{"Pod":' >/dev/null
code=$(curl -sS -o /dev/null -w '%{http_code}' "$base/explain?pod=ml/train")
[[ $code == 200 ]] || fail "GET /explain?pod=ml/train answered HTTP $code"

curl -fsS "$base/metrics" >"$work/scrape.txt" || fail "GET /metrics failed"
promtool check metrics <"$work/scrape.txt" || fail "promtool check metrics found problems in the exposition"

# What the scrape exports: metric names, with histogram series names (_bucket, _sum, _count).
grep -vE '^#' "$work/scrape.txt" | sed -E 's/[{ ].*//' | sort -u >"$work/exported.txt"
for name in gpu_topology_extender_http_requests_total gpu_topology_extender_binds_total \
  gpu_topology_extender_filter_nodes_total gpu_topology_extender_cache_synced \
  gpu_topology_extender_build_info gpu_topology_extender_snapshot_build_duration_seconds_bucket \
  gpu_topology_extender_placement_regret_ratio_bucket gpu_topology_extender_placement_below_best_class_total \
  gpu_topology_extender_fragmentation_hostable_pods gpu_topology_extender_fragmentation_stranded_gpus \
  gpu_topology_extender_fragmentation_stranded_mig_slices gpu_topology_extender_cache_pending_gpu_pods; do
  grep -qx "$name" "$work/exported.txt" || fail "the scrape lacks $name after known traffic"
done

render "$work/rule.yaml" -f "$ops_dir/values-all-on.yaml" --show-only templates/prometheusrule.yaml
python3 "$ops_dir/promql_expressions.py" "$chart/dashboards/gpu-topology-extender.json" \
  "$work/rule.yaml" "$work/exprs.yaml" "$work/exported.txt" || fail "dashboard or alert expressions name metrics the extender does not export"
promtool check rules "$work/exprs.yaml" || fail "a dashboard or alert expression does not parse"
echo "metrics: exposition is valid; dashboard and alert expressions parse and name exported metrics"
