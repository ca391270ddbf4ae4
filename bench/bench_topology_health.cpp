// The cost of the topology-health gauges (docs/topology-health.md) at cluster scale: every node's
// figures from scratch, and what one snapshot costs after a pod is bound on one node (that node's
// figures, its shard's pool totals summed again, the 64 shards merged), next to the whole
// snapshot build. Nodes: DGX-1V cube meshes, DGX H100s, A100 PCIe boxes with NVLink bridges, 4x
// L40S and DGX A100s in MIG mode, with random usage, in 8 pools. Prints medians.
//
//   build/bin/bench_topology_health [nodes=5000] [iterations=200]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "health/node_health.h"
#include "policy/default_policy.h"
#include "service/placement_recorder.h"
#include "snapshot/cluster_health.h"
#include "snapshot/cluster_snapshot_builder.h"
#include "support/charge_fixtures.h"
#include "support/node_fixtures.h"

namespace {

using Clock = std::chrono::steady_clock;
using gte::testing::FixtureState;

constexpr const char* kPoolLabel = "example.com/pool";

std::string randomUsed(std::mt19937& rng, int gpus) {
  std::string used;
  for (int i = 0; i < gpus; ++i)
    used.push_back(rng() % 3 == 0 ? '1' : '0');
  return used;
}

std::string numbered(const char* prefix, int i) {
  std::string out = prefix;
  out += std::to_string(i);
  return out;
}

gte::NodeInfo nodeOf(int i, std::mt19937& rng) {
  FixtureState state = FixtureState().withName(numbered("gpu-node-", i));
  gte::NodeInfo node;
  switch (i % 5) {
    case 0:
      node = gte::testing::makeDgx1Volta(state.withUsed(randomUsed(rng, 8)));
      break;
    case 1:
      node = gte::testing::makeDgxH100(state.withUsed(randomUsed(rng, 8)));
      break;
    case 2:
      node = gte::testing::makeA100PcieBridged(state.withUsed(randomUsed(rng, 8)));
      break;
    case 3:
      node = gte::testing::make4xPcieL40s(state.withUsed(randomUsed(rng, 4)));
      break;
    default:
      node = gte::testing::makeDgxA100(
          state.withUsed("mm" + randomUsed(rng, 6)).withMig("11000000").withMigTokens(0, "00u05u"));
  }
  node.labels[kPoolLabel] = numbered("pool-", i % 8);
  return node;
}

template <typename F>
double millis(F&& f) {
  const auto t0 = Clock::now();
  f();
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

template <typename F>
double median(int iterations, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < iterations; ++i)
    t.push_back(millis(f));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 5000;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 200;
  std::mt19937 rng(7);
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  gte::ClusterSnapshotBuilder builder(policy, kPoolLabel);
  std::vector<gte::NodeInfo> nodes;
  for (int i = 0; i < n; ++i) {
    nodes.push_back(nodeOf(i, rng));
    builder.upsertNode(nodes.back(), {});
  }
  gte::ClusterSnapshotConstSharedPtr snapshot;
  const double firstBuild = millis([&] { snapshot = builder.build(); });
  std::printf("%d nodes, %zu pools; first snapshot build (every state, answers, figures) %.1f ms\n",
              n, snapshot->health.pools.size(), firstBuild);

  // From scratch: every node's figures, summed per shard and pool, the shards merged.
  std::vector<std::pair<std::string, gte::NodeStateConstSharedPtr>> states;
  snapshot->nodes.forEach([&](const std::string& name, const gte::NodeStateConstSharedPtr& s) {
    states.emplace_back(name, s);
  });
  std::vector<gte::NodeHealth> figures(states.size());
  const double allFigures = median(std::max(1, iterations / 20), [&] {
    for (std::size_t i = 0; i < states.size(); ++i)
      figures[i] = gte::nodeHealth(*states[i].second);
  });
  std::vector<gte::PoolHealthList> shards(gte::NodeStateIndex::kShardCount);
  const std::string pool = "pool-0";
  const double sumAll = median(iterations, [&] {
    for (auto& shard : shards)
      shard.clear();
    for (std::size_t i = 0; i < states.size(); ++i) {
      gte::addToPool(shards[gte::NodeStateIndex::shardOf(states[i].first)], pool, figures[i]);
    }
  });
  gte::ClusterHealth merged;
  const double merge = median(iterations, [&] { merged = gte::mergeHealth(shards); });
  std::printf("%-52s %8.3f ms\n", "every node's figures (nodeHealth x nodes)", allFigures);
  std::printf("%-52s %8.3f ms\n", "  summed into 64 shards' pool totals", sumAll);
  std::printf("%-52s %8.3f ms\n", "  64 shards merged (mergeHealth)", merge);

  // Per snapshot after one pod bound: one node's figures, one shard re-summed, the merge.
  const std::size_t one = states.size() / 2;
  // A node's figures: the mean over every node (node kinds differ), the median of its rounds.
  const double oneFigure = allFigures / static_cast<double>(states.size());
  const std::size_t shardOfOne = gte::NodeStateIndex::shardOf(states[one].first);
  std::vector<std::size_t> inShard;
  for (std::size_t i = 0; i < states.size(); ++i) {
    if (gte::NodeStateIndex::shardOf(states[i].first) == shardOfOne) inShard.push_back(i);
  }
  const double oneShard = median(iterations, [&] {
    shards[shardOfOne].clear();
    for (const std::size_t i : inShard)
      gte::addToPool(shards[shardOfOne], pool, figures[i]);
  });
  std::printf("%-52s %8.3f ms\n", "per snapshot, one node changed: its figures (mean)", oneFigure);
  std::printf("%-52s %8.3f ms  (%zu nodes)\n", "  its shard's pool totals summed again", oneShard,
              inShard.size());
  std::printf("%-52s %8.3f ms\n", "  gauges' total per snapshot (figures + shard + merge)",
              oneFigure + oneShard + merge);

  // The whole snapshot build after a pod is bound on one node, for scale.
  int turn = 0;
  const double rebuild = median(iterations, [&] {
    const std::string& name = states[(one + static_cast<std::size_t>(turn)) % states.size()].first;
    builder.setCharges(name, gte::testing::podHolding({turn % 2, 2 + turn % 2}));
    ++turn;
    snapshot = builder.build();
  });
  std::printf("%-52s %8.3f ms\n", "snapshot build after one pod bound (all of it)", rebuild);

  // Placement regret's memory, full: the default 4,096 decisions, every pod seen bound, with
  // Kubernetes-sized UIDs and node names.
  gte::PlacementRecorder placements(nullptr);
  for (int i = 0; i < 4096; ++i) {
    const std::string uid = numbered("0f8e6a4c-5b3d-4e2f-9a1b-", 100000000 + i);
    gte::PlacementDecision decision;
    decision.gpus = 4;
    decision.bestNode = numbered("gpu-node-", i % n);
    decision.topNode = numbered("gpu-node-", (i + 1) % n);
    placements.decided(uid, decision);
    gte::PodPlacement placed;
    placed.uid = uid;
    placed.ns = "ml-training";
    placed.name = numbered("trainer-worker-", i);
    placed.node = decision.topNode;
    placed.gpus = 4;
    placed.indices = {0, 1, 2, 3};
    placements.placed(placed);
  }
  std::printf("%-52s %8zu bytes (%zu per decision)\n", "placement regret's 4,096 decisions",
              placements.bytes(), placements.bytes() / placements.size());
  return 0;
}
