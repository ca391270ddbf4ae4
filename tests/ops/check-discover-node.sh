#!/usr/bin/env bash
# A newcomer's path without a cluster: `gpu-topology-agent discover -o node` on a captured
# machine writes a Node, and `gpu-topology-extender serve --cluster-file` serves it: the node
# listing shows the machine's GPUs, its NVLink sets and its MIG capacity.
# Usage: check-discover-node.sh AGENT_BINARY EXTENDER_BINARY
source "$(dirname "$0")/ops_lib.sh"
agent=${1:?usage: check-discover-node.sh AGENT EXTENDER}
extender=${2:?usage: check-discover-node.sh AGENT EXTENDER}
need "$agent"
need "$extender"
need curl
data="$repo_root/tests/data"

"$agent" discover --topo-file "$data/topologies/hgx-a100-nvswitch.topo" \
  --mig-file "$data/agent/dgx-a100-mig.txt" --model 'NVIDIA A100-SXM4-80GB' \
  -o node --node-name a100-0 >"$work/cluster.yaml" || fail "discover -o node failed"
echo "---" >>"$work/cluster.yaml"
"$agent" discover --topo-file "$data/topologies/dgx1-v100-cubemesh.topo" \
  --model Tesla-V100-SXM2-16GB -o node --node-name dgx1v-0 >>"$work/cluster.yaml" ||
  fail "discover -o node (DGX-1V) failed"

serve_cluster_file "$extender" "$work/cluster.yaml"
table=$(curl -fsS "http://127.0.0.1:$port/scheduler/nodes?format=table") || fail "GET /nodes failed"
grep -Eq '^a100-0 +known +NVIDIA-A100-SXM4-80GB +6 +6 .* slices free: [0-9a-z.,]+$' <<<"$table" ||
  fail "the A100 node as listed: $table"
grep -Eq '^dgx1v-0 +known +Tesla-V100-SXM2-16GB +8 +8 +0,1,2,3,4,5,6,7 +8/4/2/0' <<<"$table" ||
  fail "the DGX-1V node as listed: $table"
echo "ok: discover -o node serves as a cluster file"
