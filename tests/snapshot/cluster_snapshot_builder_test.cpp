// Incremental snapshot builds: only changed nodes are re-derived, unchanged
// NodeStates are shared by pointer, a policy change re-derives everything.
#include <catch2/catch_test_macros.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "policy/default_policy.h"
#include "snapshot/cluster_snapshot_builder.h"
#include "support/charge_fixtures.h"
#include "support/node_fixtures.h"

namespace gte {
namespace {

using testing::FixtureState;

TEST_CASE("only changed nodes are rebuilt", "[snapshot][builder]") {
  ClusterSnapshotBuilder builder(std::make_shared<const Policy>(defaultPolicy()));
  builder.upsertNode(testing::makeDgxA100(FixtureState().withName("a")), {});
  builder.upsertNode(testing::makeDgxH100(FixtureState().withName("b")), {});
  builder.upsertNode(testing::make4xPcieL40s(FixtureState().withName("c")), {});
  const auto first = builder.build();
  CHECK(builder.lastBuildStats().rebuilt == 3);
  CHECK(first->nodes.size() == 3);
  CHECK_FALSE(first->synced);
  REQUIRE(first->find("b") != nullptr);
  CHECK(first->find("b")->gpuCount == 8);
  CHECK(first->find("missing") == nullptr);

  // Nothing changed: the same snapshot comes back.
  CHECK(builder.build() == first);
  // An identical upsert (a resync or a status-only update) changes nothing either.
  builder.upsertNode(testing::makeDgxA100(FixtureState().withName("a")), {});
  CHECK(builder.build() == first);

  REQUIRE(builder.setCharges("b", testing::podHolding({0, 1})));
  CHECK_FALSE(builder.setCharges("nope", testing::podHolding({0, 1})));
  const auto second = builder.build();
  CHECK(second != first);
  CHECK(second->generation > first->generation);
  CHECK(builder.lastBuildStats().rebuilt == 1);
  CHECK(builder.lastBuildStats().shared == 2);
  REQUIRE(first->nodes.get("a") != nullptr);
  CHECK(second->nodes.get("a") == first->nodes.get("a"));
  CHECK(second->nodes.get("c") == first->nodes.get("c"));
  CHECK(second->find("b")->freeCount == 6);
  CHECK(first->find("b")->freeCount == 8);  // the old snapshot is untouched
  // Only usage changed: the usage-independent table is shared, not recomputed.
  CHECK(second->find("b")->capacity == first->find("b")->capacity);

  builder.upsertNode(testing::makeDgxA100(FixtureState().withName("a").withUsed("10000000")), {});
  builder.removeNode("c");
  const auto third = builder.build();
  CHECK(third->nodes.size() == 2);
  CHECK(builder.lastBuildStats().rebuilt == 1);
  CHECK(builder.lastBuildStats().removed == 1);
  CHECK(third->find("a")->freeCount == 7);

  builder.setSynced(true);
  const auto synced = builder.build();
  CHECK(synced->synced);
  CHECK(builder.lastBuildStats().rebuilt == 0);
}

TEST_CASE("a new policy re-derives every node", "[snapshot][builder]") {
  ClusterSnapshotBuilder builder(std::make_shared<const Policy>(defaultPolicy()));
  builder.upsertNode(testing::makeDgxA100(FixtureState().withName("a")), {});
  builder.upsertNode(testing::makeDgxA100(FixtureState().withName("b")), {});
  const auto before = builder.build();
  // An equal policy is not a change.
  builder.setPolicy(std::make_shared<const Policy>(defaultPolicy()));
  CHECK(builder.build() == before);

  Policy prefixed = defaultPolicy();
  prefixed.labelPrefix = "other.example.com/";
  builder.setPolicy(std::make_shared<const Policy>(prefixed));
  const auto after = builder.build();
  CHECK(builder.lastBuildStats().rebuilt == 2);
  CHECK(after->policy->labelPrefix == "other.example.com/");
  // Under the new prefix the nodes have no labels-v1: counts from allocatable, links unknown.
  CHECK(after->find("a")->status == TopologyStatus::kUnknown);
}

TEST_CASE("5,000 nodes: one change rebuilds one node", "[snapshot][builder][perf]") {
  ClusterSnapshotBuilder builder(std::make_shared<const Policy>(defaultPolicy()));
  for (int i = 0; i < 5000; ++i) {
    const std::string name = "node-" + std::to_string(i);
    builder.upsertNode(i % 2 == 0 ? testing::makeDgxH100(FixtureState().withName(name))
                                  : testing::makeDgx1Volta(FixtureState().withName(name)),
                       {});
  }
  const auto full = builder.build();
  CHECK(builder.lastBuildStats().rebuilt == 5000);

  builder.setCharges("node-4242", testing::podHolding({3}));
  const auto next = builder.build();
  CHECK(builder.lastBuildStats().rebuilt == 1);
  CHECK(next->find("node-4242")->freeCount == 7);
  CHECK(next->find("node-4241") == full->find("node-4241"));

  std::size_t found = 0;
  for (int i = 0; i < 5000; ++i) {
    found += next->find("node-" + std::to_string(i)) != nullptr ? 1 : 0;
  }
  CHECK(found == 5000);
}

TEST_CASE("5,000 nodes: a build copies only the shards of changed nodes", "[snapshot][builder]") {
  constexpr std::size_t kShards = NodeStateIndex::kShardCount;
  const auto nodeName = [](int i) { return "node-" + std::to_string(i); };
  ClusterSnapshotBuilder builder(std::make_shared<const Policy>(defaultPolicy()));
  for (int i = 0; i < 5000; ++i) {
    builder.upsertNode(testing::makeDgxH100(FixtureState().withName(nodeName(i))), {});
  }
  const auto full = builder.build();
  REQUIRE(full->nodes.size() == 5000);
  // Every shard holds exactly the names that hash to it.
  std::size_t inShards = 0;
  for (std::size_t s = 0; s < kShards; ++s) {
    REQUIRE(full->nodes.shard(s) != nullptr);  // 5,000 names leave no shard empty
    for (const auto& [name, state] : *full->nodes.shard(s)) {
      CHECK(NodeStateIndex::shardOf(name) == s);
    }
    inShards += full->nodes.shard(s)->size();
  }
  CHECK(inShards == 5000);
  std::size_t visited = 0;
  full->nodes.forEach([&](const std::string& name, const NodeStateConstSharedPtr& state) {
    visited += state != nullptr && full->find(name) == state.get() ? 1 : 0;
  });
  CHECK(visited == 5000);

  const auto sharedShards = [](const ClusterSnapshot& a, const ClusterSnapshot& b) {
    std::size_t same = 0;
    for (std::size_t s = 0; s < kShards; ++s)
      same += a.nodes.shard(s) == b.nodes.shard(s) ? 1 : 0;
    return same;
  };
  const auto allFound = [&](const ClusterSnapshot& snapshot, int skip) {
    std::size_t found = 0;
    for (int i = 0; i < 5000; ++i) {
      if (i != skip && snapshot.find(nodeName(i)) != nullptr) ++found;
    }
    return found;
  };

  // One node's usage: its shard is copied, the other 63 are the previous snapshot's maps.
  REQUIRE(builder.setCharges("node-4242", testing::podHolding({3})));
  const auto used = builder.build();
  const std::size_t usedShard = NodeStateIndex::shardOf("node-4242");
  CHECK(sharedShards(*full, *used) == kShards - 1);
  CHECK(used->nodes.shard(usedShard) != full->nodes.shard(usedShard));
  CHECK(builder.lastBuildStats().rebuilt == 1);
  CHECK(builder.lastBuildStats().shared == 4999);
  CHECK(used->find("node-4242")->freeCount == 7);
  CHECK(full->find("node-4242")->freeCount == 8);  // the old snapshot is untouched
  CHECK(allFound(*used, -1) == 5000);

  // Removal: only the removed node's shard changes, and it no longer holds the node.
  builder.removeNode("node-17");
  const auto removed = builder.build();
  const std::size_t removedShard = NodeStateIndex::shardOf("node-17");
  CHECK(sharedShards(*used, *removed) == kShards - 1);
  CHECK(removed->nodes.shard(removedShard) != used->nodes.shard(removedShard));
  CHECK_FALSE(removed->nodes.shard(removedShard)->contains("node-17"));
  CHECK(removed->nodes.shard(removedShard)->size() + 1 == used->nodes.shard(removedShard)->size());
  CHECK(builder.lastBuildStats().rebuilt == 0);
  CHECK(builder.lastBuildStats().removed == 1);
  CHECK(builder.lastBuildStats().shared == 4999);
  CHECK(removed->nodes.size() == 4999);
  CHECK(removed->find("node-17") == nullptr);
  CHECK(removed->nodes.get("node-17") == nullptr);
  CHECK(used->find("node-17") != nullptr);
  CHECK(allFound(*removed, 17) == 4999);

  // Addition: the new node lands in the shard its name hashes to, the others are shared.
  builder.upsertNode(testing::makeDgxH100(FixtureState().withName("node-5000")), {});
  const auto added = builder.build();
  const std::size_t addedShard = NodeStateIndex::shardOf("node-5000");
  CHECK(sharedShards(*removed, *added) == kShards - 1);
  CHECK(added->nodes.shard(addedShard)->contains("node-5000"));
  CHECK(builder.lastBuildStats().rebuilt == 1);
  CHECK(builder.lastBuildStats().shared == 4999);
  CHECK(added->nodes.size() == 5000);
  CHECK(added->nodes.get("node-5000") != nullptr);
  CHECK(removed->find("node-5000") == nullptr);
  CHECK(allFound(*added, 17) == 4999);

  // The synced flag alone re-derives nothing and shares every shard.
  builder.setSynced(true);
  const auto synced = builder.build();
  CHECK(synced != added);
  CHECK(synced->synced);
  CHECK(sharedShards(*added, *synced) == kShards);
  CHECK(builder.lastBuildStats().rebuilt == 0);
  CHECK(builder.lastBuildStats().shared == 5000);

  // A new policy re-derives every node, so every shard is new.
  Policy prefixed = defaultPolicy();
  prefixed.labelPrefix = "other.example.com/";
  builder.setPolicy(std::make_shared<const Policy>(prefixed));
  const auto repoliced = builder.build();
  CHECK(sharedShards(*synced, *repoliced) == 0);
  CHECK(builder.lastBuildStats().rebuilt == 5000);
  CHECK(repoliced->nodes.size() == 5000);
  CHECK(repoliced->find("node-5000") != nullptr);
}

}  // namespace
}  // namespace gte
