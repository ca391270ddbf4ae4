#!/usr/bin/env bash
# The kubectl plugin (tools/kubectl-gpu_topology) under a POSIX shell (dash), against the real
# extender binary (--cluster-file) with a stand-in kubectl (fake-kubectl.sh) that forwards its
# port-forward, get --raw and create --raw calls to that extender. Checks both ways of reaching it
# (--via port-forward, --via proxy), each command's table and JSON, the bodies it builds (pod
# flags, CSV, policy file), the errors it passes on, and its flag errors; and the cordon commands'
# annotation edits against a stand-in kubectl that holds one Node's annotations. The real kubectl and API
# server are exercised by the e2e test (tests/e2e, TestKubectlPlugin).
# Usage: check-kubectl-plugin.sh PATH/TO/gpu-topology-extender
source "$(dirname "$0")/ops_lib.sh"
binary=${1:?usage: check-kubectl-plugin.sh EXTENDER_BINARY}
need "$binary"
need curl
shell=$(command -v dash || command -v sh)
plugin="$repo_root/tools/kubectl-gpu_topology"

serve_cluster_file "$binary" "$repo_root/tests/golden/cluster.yaml" --log-level warn
export FAKE_EXTENDER_PORT=$port FAKE_KUBECTL_LOG="$work/kubectl.log" KUBECTL="$ops_dir/fake-kubectl.sh"

plugin() { "$shell" "$plugin" "$@"; }
expect() {  # expect NAME WANT GOT
  [[ $2 == "$3" ]] || fail "$1: want
$2
got
$3"
}

for via in port-forward proxy; do
  nodes=$(plugin --via "$via" nodes --node pcie4) || fail "$via: nodes failed"
  expect "$via nodes" "NODE   TOPOLOGY  MODEL        USABLE  FREE  FREE GPUS  SETS 1/2/4/8  LARGEST  LINKS        MIG
pcie4  known     NVIDIA-L40S  4       4     0,1,2,3    4/0/0/0       1        pix:2 sys:4  -
1 node: 4 free GPUs; free all-NVLink sets of 1/2/4/8 GPUs: 4/0/0/0
(1 of the 5 nodes in the cache listed)" "$nodes"

  explain=$(plugin --via "$via" explain ml/train --top 2) || fail "$via: explain failed"
  expect "$via explain" "pod ml/train: 2 GPUs, binpack
NODE  VERDICT  SCORE  WIRE  GPUS  LINK    NUMA  REASON
dgx1  fit      88     10    6,7   nvlink  1     -
a100  fit      78     2     4,5   nvlink  1     -
(3 more nodes not shown: --top 2)" "$explain"

  # The same what-if as the whatif command's HTTP test: the same table.
  whatif=$(plugin --via "$via" whatif --gpus 2 --count 3 --min-link nvlink) || fail "$via: whatif failed"
  want=$("$binary" whatif --url "http://127.0.0.1:$port" --gpus 2 --count 3 --min-link nvlink)
  expect "$via whatif" "$want" "$whatif"
  grep -q '^whatif-3  dgx1  1,3   nvlink' <<<"$whatif" || fail "$via whatif: the third pod is not on dgx1 1,3"
  # A group what-if: the plugin passes --group-size through; the same table as the command's.
  group=$(plugin --via "$via" whatif --gpus 2 --group-size 2 --min-link nvlink) ||
    fail "$via: whatif --group-size failed"
  want=$("$binary" whatif --url "http://127.0.0.1:$port" --gpus 2 --group-size 2 --min-link nvlink)
  expect "$via whatif --group-size" "$want" "$group"
  grep -q '^what-if: a group of 2 pods of 2 GPUs' <<<"$group" || fail "$via whatif --group-size: $group"
  grep -q '^running: group planned' <<<"$group" || fail "$via whatif --group-size: not planned: $group"

  json=$(plugin --via "$via" nodes -o json)
  python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["listed"] == 5, d' <<<"$json" ||
    fail "$via nodes -o json is not the listing"
done

# The bodies it builds: a CSV with quotes and a policy file, side by side.
printf 'name,cpu_milli,memory_mib,num_gpu\n"quoted",1,1,0\nbig,1,1,4\n' >"$work/pods.csv"
csv=$(plugin whatif --csv "$work/pods.csv" -o json) || fail "whatif --csv failed"
python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["policies"][0]["placements"]
assert d["mode"] == "csv" and p[0]["pod"] == "\"quoted\"" and p[1]["gpusRequested"] == 4, d
' <<<"$csv" || fail "whatif --csv: unexpected answer: $csv"
printf 'strategy: spread\n# a "quoted" comment\\ with a backslash\n' >"$work/spread.yaml"
side=$(plugin whatif --gpus 1 --count 2 --policy "$work/spread.yaml") || fail "whatif --policy failed"
grep -q '^proposed policy .*: 1 GPU, spread$' <<<"$side" || fail "whatif --policy: no proposed run: $side"
grep -q '\[proposed\]' <<<"$side" || fail "whatif --policy: not side by side: $side"
printf '{"metadata":{"name":"train"},"spec":{"containers":[{"name":"m","resources":{"limits":{"nvidia.com/gpu":"4"}}}]}}' >"$work/pod.json"
pod=$(plugin --via proxy whatif --pod-file "$work/pod.json" -o json) || fail "whatif --pod-file failed"
grep -q '"pod":"train"' <<<"$pod" || fail "whatif --pod-file: $pod"

# Errors: the extender's refusal on stderr with exit 1, through both ways; flag errors exit 2.
printf 'weights:\n  linkQuality: -1\n' >"$work/broken.yaml"
# Through port-forward the extender's message; through the proxy kubectl's status line and the
# plugin's note on where the message is.
if err=$(plugin whatif --gpus 1 --policy "$work/broken.yaml" 2>&1); then
  fail "port-forward: a broken policy was accepted"
fi
grep -q 'HTTP 400 .*policy: weights.linkQuality: must be >= 0' <<<"$err" || fail "port-forward: broken policy: $err"
if err=$(plugin nodes --node nope 2>&1); then fail "port-forward: an unknown node listed"; fi
grep -q 'HTTP 404 .*node \\"nope\\" is not in the cache' <<<"$err" || fail "port-forward: unknown node: $err"
if err=$(plugin --via proxy whatif --gpus 1 --policy "$work/broken.yaml" 2>&1); then
  fail "proxy: a broken policy was accepted"
fi
grep -q 'Error from server (HTTP 400)' <<<"$err" || fail "proxy: broken policy: $err"
grep -q 'the service proxy kubectl shows the status only; --via port-forward' <<<"$err" ||
  fail "proxy: broken policy without the note: $err"
status=0
plugin whatif --gpus 0 2>/dev/null || status=$?
expect "--gpus 0 exit status" 2 "$status"
status=0
plugin whatif --gpus 1 --csv "$work/pods.csv" 2>/dev/null || status=$?
expect "two pod forms exit status" 2 "$status"
status=0
plugin whatif --gpus 1 --count 2 --group-size 2 2>/dev/null || status=$?
expect "--count with --group-size exit status" 2 "$status"
status=0
plugin explain nonamespace 2>/dev/null || status=$?
expect "explain without a namespace exit status" 2 "$status"
status=0
plugin --via carrier-pigeon nodes 2>/dev/null || status=$?
expect "--via exit status" 2 "$status"
plugin --help | grep -q 'kubectl gpu-topology' || fail "--help"

# What it asked kubectl for: the namespace, service and port flags reach the calls.
: >"$FAKE_KUBECTL_LOG"
plugin -n gpu-system --service gte --port 9999 --context prod nodes >/dev/null
plugin -n gpu-system --service gte --port 9999 --via proxy --scheme https nodes >/dev/null 2>&1 || true
expect "kubectl calls" "--context prod -n gpu-system port-forward svc/gte :9999
get --raw /api/v1/namespaces/gpu-system/services/https:gte:9999/proxy/nodes?format=table" \
  "$(cat "$FAKE_KUBECTL_LOG")"
# Without -n and --service the chart's release is found by its Service's labels: its namespace,
# name and port reach the port-forward.
: >"$FAKE_KUBECTL_LOG"
plugin nodes >/dev/null || fail "nodes with the release found by label"
expect "release found by label" "get services --all-namespaces -l app.kubernetes.io/name=gpu-topology-extender,app.kubernetes.io/component=extender -o jsonpath={range .items[*]}{.metadata.namespace} {.metadata.name} {.spec.ports[0].port}{\"\\n\"}{end}
-n gpu-system port-forward svc/gte-gpu-topology-extender :8888" "$(cat "$FAKE_KUBECTL_LOG")"
# --service alone: the kubectl context's namespace, else default (as kubectl would).
: >"$FAKE_KUBECTL_LOG"
FAKE_CONTEXT_NAMESPACE=gpu-team plugin --service gte nodes >/dev/null || fail "--service alone"
grep -q '^-n gpu-team port-forward svc/gte ' "$FAKE_KUBECTL_LOG" ||
  fail "--service alone must use the context's namespace: $(cat "$FAKE_KUBECTL_LOG")"
: >"$FAKE_KUBECTL_LOG"
plugin --service gte nodes >/dev/null || fail "--service alone, no context namespace"
grep -q '^-n default port-forward svc/gte ' "$FAKE_KUBECTL_LOG" ||
  fail "--service alone without a context namespace must use default: $(cat "$FAKE_KUBECTL_LOG")"
# -n alone looks in that namespace only.
: >"$FAKE_KUBECTL_LOG"
plugin -n gpu-system nodes >/dev/null || fail "nodes with -n alone"
grep -q '^get services -n gpu-system -l ' "$FAKE_KUBECTL_LOG" || fail "-n alone: $(cat "$FAKE_KUBECTL_LOG")"
# None, or several: exit 1 saying what to pass.
status=0
err=$(FAKE_SERVICES="" plugin nodes 2>&1) || status=$?
[[ $status == 1 ]] || fail "no release: want exit 1, got $status"
[[ $err == *"no gpu-topology-extender Service found"*"--url"* ]] || fail "no release: $err"
status=0
err=$(FAKE_SERVICES="a gte-a 8888
b gte-b 8888" plugin nodes 2>&1) || status=$?
[[ $status == 1 ]] || fail "several releases: want exit 1, got $status"
[[ $err == *"-n a --service gte-a"*"-n b --service gte-b"* ]] || fail "several releases: $err"
# --url: straight to the extender, no kubectl call.
: >"$FAKE_KUBECTL_LOG"
direct=$(plugin --url "http://127.0.0.1:$port/" nodes --node pcie4) || fail "--url nodes failed"
[[ $direct == *pcie4* ]] || fail "--url nodes: $direct"
[[ ! -s $FAKE_KUBECTL_LOG ]] || fail "--url called kubectl: $(cat "$FAKE_KUBECTL_LOG")"
status=0
plugin --url ftp://x nodes 2>/dev/null || status=$?
[[ $status == 2 ]] || fail "--url ftp://x: want exit 2, got $status"

# Cordon commands: a stand-in kubectl holding one Node's annotations (node n1; first line of
# $NODE_STATE the resourceVersion, then KEY=VALUE lines) answers the plugin's get and annotate.
cat >"$work/node-kubectl.sh" <<'EOF'
#!/bin/sh
set -eu
printf '%s\n' "$*" >>"$NODE_KUBECTL_LOG"
[ "$1" != --context ] || shift 2
case $1 in
  get)  # get node NAME -o jsonpath={.metadata.resourceVersion} {.metadata.annotations.KEY}
    [ "$3" = n1 ] || { echo "Error from server (NotFound): nodes \"$3\" not found" >&2; exit 1; }
    key=$(printf '%s' "$5" | sed -e 's/.*annotations\.//' -e 's/}$//' -e 's/\\\././g')
    value=$(sed -n '2,$p' "$NODE_STATE" | awk -v k="$key" 'index($0, k "=") == 1 { print substr($0, length(k) + 2) }')
    printf '%s %s' "$(head -n 1 "$NODE_STATE")" "$value"
    ;;
  annotate)  # annotate --overwrite --resource-version V node NAME KEY=VALUE|KEY-
    if [ "$(cat "$NODE_CONFLICTS")" -gt 0 ]; then
      echo $(($(cat "$NODE_CONFLICTS") - 1)) >"$NODE_CONFLICTS"
      echo 'error: Operation cannot be fulfilled on nodes "n1": the object has been modified; please apply your changes to the latest version and try again' >&2
      exit 1
    fi
    [ "$4" = "$(head -n 1 "$NODE_STATE")" ] || { echo "stale resourceVersion $4" >&2; exit 1; }
    arg=$7
    case $arg in *=*) key=${arg%%=*} ;; *) key=${arg%-} ;; esac
    { echo $(($4 + 1)); sed -n '2,$p' "$NODE_STATE" | awk -v k="$key" 'index($0, k "=") != 1'
      case $arg in *=*) printf '%s\n' "$arg" ;; esac; } >"$NODE_STATE.new"
    mv "$NODE_STATE.new" "$NODE_STATE"
    ;;
  *) echo "node-kubectl: unexpected call: $*" >&2; exit 1 ;;
esac
EOF
chmod +x "$work/node-kubectl.sh"
export NODE_STATE="$work/node-state" NODE_KUBECTL_LOG="$work/node-kubectl.log" NODE_CONFLICTS="$work/conflicts"
echo 0 >"$NODE_CONFLICTS"
printf '1\nother/key=kept\n' >"$NODE_STATE"
cordon() { KUBECTL="$work/node-kubectl.sh" plugin "$@"; }
annotation() { sed -n '2,$p' "$NODE_STATE" | awk -v k="$1" 'index($0, k "=") == 1 { print substr($0, length(k) + 2) }'; }
gpus=gputopo.dev/cordoned-gpus links=gputopo.dev/cordoned-links

out=$(cordon cordon-gpu n1 3) || fail "cordon-gpu failed"
expect "cordon-gpu output" "node/n1: $gpus=3" "$out"
cordon cordon-gpu n1 5 >/dev/null
expect "cordon-gpu keeps the others" "3,5" "$(annotation $gpus)"
: >"$NODE_KUBECTL_LOG"
out=$(cordon cordon-gpu n1 05)
expect "cordon-gpu of a cordoned GPU" "node/n1: $gpus already 3,5 (holds 5)" "$out"
grep -q '^annotate' "$NODE_KUBECTL_LOG" && fail "an unchanged annotation was written"
expect "other annotations untouched" "kept" "$(annotation other/key)"
# Entries it does not understand are kept: the agent reports them.
printf '7\n%s=7, x ,3\n' "$gpus" >"$NODE_STATE"
cordon uncordon-gpu n1 3 >/dev/null
expect "uncordon-gpu keeps the others" "7,x" "$(annotation $gpus)"
cordon uncordon-gpu n1 x >/dev/null 2>&1 && fail "uncordon-gpu took a malformed GPU"
cordon --label-prefix gputopo.dev/ uncordon-gpu n1 7 >/dev/null
expect "uncordon keeps what it does not understand" "x" "$(annotation $gpus)"
: >"$NODE_KUBECTL_LOG"
printf '9\n%s=3\n' "$gpus" >"$NODE_STATE"
cordon uncordon-gpu n1 3 >/dev/null
grep -q "annotate --overwrite --resource-version 9 node n1 $gpus-\$" "$NODE_KUBECTL_LOG" ||
  fail "the last entry removed must remove the annotation: $(cat "$NODE_KUBECTL_LOG")"
[[ -z $(annotation $gpus) ]] || fail "annotation left: $(cat "$NODE_STATE")"
# Links: I-J in one spelling (I < J).
cordon cordon-link n1 1-0 >/dev/null
cordon cordon-link n1 2-3 >/dev/null
cordon cordon-link n1 0-1 >/dev/null
expect "cordon-link" "0-1,2-3" "$(annotation $links)"
cordon uncordon-link n1 3-2 >/dev/null
expect "uncordon-link" "0-1" "$(annotation $links)"
# Another prefix, and a concurrent edit (kubectl refuses the stale resourceVersion: tried again).
echo 1 >"$NODE_CONFLICTS"
: >"$NODE_KUBECTL_LOG"
GTE_LABEL_PREFIX=example.com/ cordon cordon-gpu n1 2 >/dev/null || fail "cordon after a conflict"
expect "prefix" "2" "$(annotation example.com/cordoned-gpus)"
expect "retried once" 2 "$(grep -c '^annotate' "$NODE_KUBECTL_LOG")"
grep -q 'jsonpath={.metadata.resourceVersion} {.metadata.annotations.example\\.com/cordoned-gpus}' \
  "$NODE_KUBECTL_LOG" || fail "jsonpath key not escaped: $(cat "$NODE_KUBECTL_LOG")"
# Errors: bad arguments exit 2, kubectl failing exits 1.
for args in "cordon-gpu n1 x" "cordon-gpu n1 -1" "cordon-gpu n1" "cordon-link n1 3" "cordon-link n1 3-3" \
  "uncordon-link n1 a-b" "cordon-link n1 1-2 extra"; do
  status=0
  # shellcheck disable=SC2086
  cordon $args 2>/dev/null || status=$?
  expect "$args exit status" 2 "$status"
done
status=0
err=$(cordon cordon-gpu nope 1 2>&1) || status=$?
expect "unknown node exit status" 1 "$status"
[[ $err == *"reading node nope"*NotFound* ]] || fail "unknown node: $err"

echo "kubectl plugin: nodes, explain and whatif through port-forward and the service proxy; cordon edits"
