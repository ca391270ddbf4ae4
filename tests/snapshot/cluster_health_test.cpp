// The snapshot's topology-health figures (snapshot/cluster_health.h) are what a brute-force
// recount of every node finds, after every step of random churn (nodes relabelled, pods bound
// and gone, nodes removed, pools renamed), although each build recomputes only the changed nodes
// and re-sums only their shards. The recount shares no code with the incremental path: it
// enumerates every subset of every node's GPUs.
#include <catch2/catch_test_macros.hpp>

#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/fragmentation.h"
#include "policy/default_policy.h"
#include "snapshot/cluster_snapshot_builder.h"
#include "support/charge_fixtures.h"
#include "support/node_fixtures.h"
#include "topology/pair_table.h"

namespace gte {
namespace {

using testing::FixtureState;

constexpr const char* kPoolLabel = "example.com/pool";

// Every pair of `set` at least `floor`.
bool allPairsAtLeast(const GpuTopology& topology, GpuMask set, LinkClass floor) {
  for (int i = 0; i < topology.gpuCount; ++i) {
    for (int j = i + 1; j < topology.gpuCount; ++j) {
      if ((set & bitOf(i)) && (set & bitOf(j)) && topology.linkClass(i, j) < floor) return false;
    }
  }
  return true;
}

// Every k-subset of `members` whose pairs are all at least `floor`.
std::vector<GpuMask> goodSets(const GpuTopology& topology, GpuMask members, int k,
                              LinkClass floor) {
  std::vector<GpuMask> out;
  for (GpuMask sub = members; sub != 0; sub = (sub - 1) & members) {
    if (gpuCountOf(sub) == k && allPairsAtLeast(topology, sub, floor)) out.push_back(sub);
  }
  return out;
}

// The most disjoint sets among `sets` inside `members`, by trying every set at every step.
int bruteDisjoint(const std::vector<GpuMask>& sets, GpuMask members, std::map<GpuMask, int>& memo) {
  if (const auto it = memo.find(members); it != memo.end()) return it->second;
  int best = 0;
  for (const GpuMask set : sets) {
    if ((set & ~members) == 0) best = std::max(best, 1 + bruteDisjoint(sets, members & ~set, memo));
  }
  return memo[members] = best;
}

int largestClique(const GpuTopology& topology, GpuMask members) {
  int largest = members != 0 ? 1 : 0;
  for (GpuMask sub = members; sub != 0; sub = (sub - 1) & members) {
    if (allPairsAtLeast(topology, sub, LinkClass::kNvlink)) {
      largest = std::max(largest, gpuCountOf(sub));
    }
  }
  return largest;
}

int bruteMigStranded(const NodeState& state) {
  if (!state.migProduct) return 0;
  std::vector<const MigProfile*> inUse;
  for (const auto& instances : state.migInstances) {
    for (const MigInstance& i : instances) {
      const MigProfile* p = state.migProduct->findByCode(i.profileCode);
      if (p && std::find(inUse.begin(), inUse.end(), p) == inUse.end()) inUse.push_back(p);
    }
  }
  int stranded = 0;
  for (std::size_t gpu = 0; gpu < state.migUsable.size() && !inUse.empty(); ++gpu) {
    if (!state.migUsable[gpu]) continue;
    const SliceMask occupied = state.migOccupied[gpu];
    for (int slice = 0; slice < kMigMemorySlices; ++slice) {
      if (occupied & (1 << slice)) continue;
      bool reachable = false;
      for (const MigProfile* p : inUse) {
        for (const int start : p->starts) {
          bool fits = start + p->slices <= kMigMemorySlices;
          for (int s = start; fits && s < start + p->slices; ++s)
            fits = (occupied & (1 << s)) == 0;
          reachable = reachable || (fits && start <= slice && slice < start + p->slices);
        }
      }
      stranded += reachable ? 0 : 1;
    }
  }
  return stranded;
}

NodeHealth bruteHealth(const NodeState& state) {
  NodeHealth h;
  const GpuTopology& t = state.topology;
  h.freeGpus = state.freeCount;
  for (std::size_t i = 0; i < kHealthSizeCount; ++i) {
    const int k = kHealthSizes[i];
    if (k > state.usableCount) continue;
    h.packable[i] = state.freeCount;
    const LinkClass best = (*state.capacity)[static_cast<std::size_t>(k)].devicePluginWeakest;
    std::map<GpuMask, int> memoBest;
    std::map<GpuMask, int> memoNvlink;
    h.hostable[i] = bruteDisjoint(goodSets(t, state.freeMask, k, best), state.freeMask, memoBest);
    const auto nvlinkSets = goodSets(t, state.freeMask, k, LinkClass::kNvlink);
    h.nvlinkSets[i] = bruteDisjoint(nvlinkSets, state.freeMask, memoNvlink);
    if (k >= 2 && !goodSets(t, state.usableMask, k, LinkClass::kNvlink).empty()) {
      for (int gpu = 0; gpu < state.gpuCount; ++gpu) {
        if ((state.freeMask & bitOf(gpu)) == 0) continue;
        const bool inSet = std::any_of(nvlinkSets.begin(), nvlinkSets.end(),
                                       [&](GpuMask s) { return (s & bitOf(gpu)) != 0; });
        h.stranded[i] += inSet ? 0 : 1;
      }
    }
  }
  h.strandedMigSlices = bruteMigStranded(state);
  const int clique = largestClique(t, state.freeMask);
  for (const int size : kFragmentationSizes)
    h.unusableGpus += unusableFreeGpus(state, size, state.freeCount, clique);
  for (int k = 2; k <= kMaxOfferedGpus && k <= state.freeCount; ++k) {
    const GpuPick& pick = state.whole[static_cast<std::size_t>(k)].devicePlugin;
    h.offered[static_cast<std::size_t>(k)] = SetQuality{pick.weakest, pick.bandwidthGBps};
  }
  return h;
}

std::map<std::string, HealthTotals> recount(const ClusterSnapshot& snapshot,
                                            const std::map<std::string, NodeInfo>& nodes) {
  std::map<std::string, HealthTotals> pools;
  snapshot.nodes.forEach([&](const std::string& name, const NodeStateConstSharedPtr& state) {
    const NodeInfo& node = nodes.at(name);
    const auto label = node.labels.find(kPoolLabel);
    const std::string pool = label != node.labels.end() ? label->second : state->topology.model;
    pools[pool].add(bruteHealth(*state));
  });
  return pools;
}

std::string randomUsed(std::mt19937& rng, int gpus) {
  std::string used;
  for (int i = 0; i < gpus; ++i)
    used.push_back(rng() % 3 == 0 ? '1' : '0');
  return used;
}

NodeInfo randomNode(std::mt19937& rng, const std::string& name) {
  FixtureState state = FixtureState().withName(name);
  NodeInfo node;
  switch (rng() % 6) {
    case 0:
      node = testing::makeDgx1Volta(state.withUsed(randomUsed(rng, 8)));
      break;
    case 1:
      node = testing::makeDgxH100(state.withUsed(randomUsed(rng, 8)));
      break;
    case 2:
      node = testing::make4xPcieL40s(state.withUsed(randomUsed(rng, 4)));
      break;
    case 3:
      node = testing::makeA100PcieBridged(state.withUsed(randomUsed(rng, 8)));
      break;
    case 4:
      node = testing::makeDgx1Pascal(state.withUsed(randomUsed(rng, 8)));
      break;
    default: {
      const char* layouts[] = {"00f05f", "00u01u24f", "10u02f03u24f", "20u"};
      node = testing::makeDgxA100(state.withUsed("m" + randomUsed(rng, 7))
                                      .withMig("10000000")
                                      .withMigTokens(0, layouts[rng() % 4]));
    }
  }
  const char* pools[] = {"train", "infer", nullptr};
  if (const char* pool = pools[rng() % 3]) node.labels[kPoolLabel] = pool;
  return node;
}

// "<prefix><i>" (operator+ on a literal trips GCC 12's -Wrestrict at -O3).
std::string numbered(const char* prefix, unsigned i) {
  std::string out = prefix;
  out += std::to_string(i);
  return out;
}

std::vector<int> randomGpus(std::mt19937& rng, int gpus) {
  std::vector<int> out;
  for (int i = 0; i < gpus; ++i) {
    if (rng() % 4 == 0) out.push_back(i);
  }
  return out;
}

TEST_CASE("health figures match a brute-force recount after random churn", "[snapshot][health]") {
  std::mt19937 rng(20240611);
  ClusterSnapshotBuilder builder(std::make_shared<const Policy>(defaultPolicy()), kPoolLabel);
  std::map<std::string, NodeInfo> nodes;
  for (int i = 0; i < 40; ++i) {
    const std::string name = numbered("n", static_cast<unsigned>(i));
    nodes[name] = randomNode(rng, name);
    builder.upsertNode(nodes[name], {});
  }
  for (int step = 0; step < 120; ++step) {
    const std::string name = numbered("n", static_cast<unsigned>(rng() % 48));
    const auto known = nodes.find(name);
    switch (rng() % 4) {
      case 0:  // relabelled or added (another machine, usage or pool)
        nodes[name] = randomNode(rng, name);
        builder.upsertNode(nodes[name], {});
        break;
      case 1:  // pods bound or gone
        if (known != nodes.end()) {
          builder.setCharges(name, testing::podHolding(randomGpus(rng, 8)));
        }
        break;
      case 2:
        if (known != nodes.end()) {
          builder.removeNode(name);
          nodes.erase(known);
        }
        break;
      default:  // a second change in the same build
        if (known != nodes.end()) builder.setCharges(name, testing::podHolding({}));
        nodes[name + "x"] = randomNode(rng, name + "x");
        builder.upsertNode(nodes[name + "x"], {});
    }
    const auto snapshot = builder.build();
    INFO("step " << step);
    const auto expected = recount(*snapshot, nodes);
    HealthTotals total;
    REQUIRE(snapshot->health.pools.size() == expected.size());
    for (const PoolHealth& pool : snapshot->health.pools) {
      INFO("pool " << pool.pool);
      REQUIRE(expected.contains(pool.pool));
      CHECK(pool.totals == expected.at(pool.pool));
      total.add(expected.at(pool.pool));
    }
    CHECK(snapshot->health.total == total);
    CHECK(snapshot->health.total.approximateNodes == 0);
  }
}

TEST_CASE("pools beyond the bound fold into other", "[snapshot][health]") {
  std::vector<PoolHealthList> shards(2);
  NodeHealth one;
  one.freeGpus = 1;
  for (int i = 0; i < 40; ++i) {
    // Pool p0 has 40 nodes, p1 39, ... p39 one: the 31 largest are kept.
    for (int n = i; n < 40; ++n)
      addToPool(shards[static_cast<std::size_t>(n % 2)], numbered("p", static_cast<unsigned>(i)),
                one);
  }
  const ClusterHealth merged = mergeHealth(shards);
  REQUIRE(merged.pools.size() == kMaxHealthPools);
  CHECK(merged.total.nodes == 40 * 41 / 2);
  const auto other = std::find_if(merged.pools.begin(), merged.pools.end(),
                                  [](const PoolHealth& p) { return p.pool == kOtherPool; });
  REQUIRE(other != merged.pools.end());
  // p31..p39 hold 9 + 8 + ... + 1 = 45 nodes.
  CHECK(other->totals.nodes == 45);
  CHECK(std::is_sorted(merged.pools.begin(), merged.pools.end(),
                       [](const PoolHealth& a, const PoolHealth& b) { return a.pool < b.pool; }));
}

}  // namespace
}  // namespace gte
