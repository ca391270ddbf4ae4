// Incremental snapshot builds (design anchor 3): only changed nodes are re-derived, unchanged
// NodeStates are shared by pointer, a policy change re-derives everything.
#include <catch2/catch_test_macros.hpp>

#include <string>

#include "policy/default_policy.h"
#include "snapshot/cluster_snapshot_builder.h"
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

  NodeUsage usage;
  usage.gpus = {0, 1};
  REQUIRE(builder.setUsage("b", usage));
  CHECK_FALSE(builder.setUsage("nope", usage));
  const auto second = builder.build();
  CHECK(second != first);
  CHECK(second->generation > first->generation);
  CHECK(builder.lastBuildStats().rebuilt == 1);
  CHECK(builder.lastBuildStats().shared == 2);
  CHECK(second->nodes.at("a") == first->nodes.at("a"));
  CHECK(second->nodes.at("c") == first->nodes.at("c"));
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

  NodeUsage usage;
  usage.gpus = {3};
  builder.setUsage("node-4242", usage);
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

}  // namespace
}  // namespace gte
