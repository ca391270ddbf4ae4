// NodeNames lookups kept between requests (service/resolution_memo.h): a request finds the
// lookups of an earlier one only for exactly the same names on a snapshot of the same node shards,
// and the answers always follow the snapshot the request loaded, never a kept one.
#include "service/resolution_memo.h"

#include <catch2/catch_test_macros.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "policy/default_policy.h"
#include "service/extender_service.h"
#include "snapshot/cluster_snapshot_builder.h"
#include "support/node_fixtures.h"
#include "support/object_json.h"
#include "support/pod_fixtures.h"
#include "support/snapshot_backend.h"

namespace {

using gte::NodeStateShard;
using gte::ResolutionMemo;
using nlohmann::json;

std::vector<NodeStateShard::Found> lookups(std::size_t n) {
  // Distinct, recognisable pointers; the memo never dereferences them.
  static const std::vector<gte::NodeState> states(8);
  std::vector<NodeStateShard::Found> out;
  for (std::size_t i = 0; i < n; ++i)
    out.push_back({&states[i % states.size()], nullptr, nullptr});
  return out;
}

}  // namespace

// Snapshots of one builder: `before`; `replanned`, a later build that changed no node (a group's
// plan table replaced, as a member's pin does); `changed`, a build after a node changed.
struct Builds {
  Builds() : builder(std::make_shared<const gte::Policy>(gte::defaultPolicy())) {
    builder.setSynced(true);
    builder.upsertNode(gte::testing::makeDgx1Volta(gte::testing::FixtureState().withName("a")));
    before = builder.build();
    auto plans = std::make_shared<gte::GroupPlanTable>();
    plans->emplace("ml/annotation/job", std::make_shared<const gte::CommittedGroupPlan>());
    builder.setGroupPlans(std::move(plans));
    replanned = builder.build();
    builder.upsertNode(gte::testing::makeDgx1Volta(
        gte::testing::FixtureState().withName("a").withUsed("11000000")));
    changed = builder.build();
  }
  gte::ClusterSnapshotBuilder builder;
  gte::ClusterSnapshotConstSharedPtr before;
  gte::ClusterSnapshotConstSharedPtr replanned;
  gte::ClusterSnapshotConstSharedPtr changed;
};

TEST_CASE("A build that changes no node keeps the node generation; one that does takes a new one") {
  const Builds builds;
  REQUIRE(builds.before != builds.replanned);
  CHECK(builds.before->nodesGeneration != 0);
  CHECK(builds.replanned->nodesGeneration == builds.before->nodesGeneration);
  CHECK(builds.changed->nodesGeneration != builds.before->nodesGeneration);
  // Another builder never repeats a value.
  const Builds other;
  CHECK(other.before->nodesGeneration != builds.before->nodesGeneration);
  CHECK(other.before->nodesGeneration != builds.changed->nodesGeneration);
}

TEST_CASE(
    "The memo finds the lookups of the same names on snapshots of the same node shards only") {
  const Builds builds;
  const std::vector<std::string> names{"node-1", "node-2", "node-10"};
  ResolutionMemo memo;
  CHECK(memo.find(builds.before, names) == nullptr);

  memo.keep(builds.before, names, lookups(3));
  const auto kept = memo.find(builds.before, names);
  REQUIRE(kept != nullptr);
  CHECK(kept->found[2].state == lookups(3)[2].state);
  // A later snapshot that shares every shard (a pin, a member waiting) finds them too.
  CHECK(memo.find(builds.replanned, names) == kept);

  CHECK(memo.find(builds.changed, names) == nullptr);  // a node changed since
  CHECK(memo.find(builds.before, std::vector<std::string>{"node-2", "node-1", "node-10"}) ==
        nullptr);
  // Same bytes, other boundaries; a name that is a prefix of the kept one; one name fewer.
  CHECK(memo.find(builds.before, std::vector<std::string>{"node-1node-2", "", "node-10"}) ==
        nullptr);
  CHECK(memo.find(builds.before, std::vector<std::string>{"node-1", "node-2", "node-1"}) ==
        nullptr);
  CHECK(memo.find(builds.before, std::vector<std::string>{"node-1", "node-2"}) == nullptr);

  // A snapshot no builder made has no node generation: never kept, never found.
  const auto loose = std::make_shared<const gte::ClusterSnapshot>();
  memo.keep(loose, names, lookups(3));
  CHECK(memo.find(loose, names) == nullptr);
  CHECK(memo.find(builds.before, names) == kept);  // and it dropped nothing
}

TEST_CASE("The memo keeps a few lists of the newest node generation and never holds a snapshot") {
  Builds builds;
  const std::weak_ptr<const gte::ClusterSnapshot> watch = builds.before;
  ResolutionMemo memo;
  memo.keep(builds.before, std::vector<std::string>{"x"}, lookups(1));
  builds.before.reset();
  builds.replanned.reset();
  CHECK(watch.expired());  // the memo holds no snapshot

  // Keeping a list of a newer generation drops the older ones.
  memo.keep(builds.changed, std::vector<std::string>{"x"}, lookups(1));
  CHECK(memo.find(builds.changed, std::vector<std::string>{"x"}) != nullptr);

  // Up to kEntries lists of one generation; one more replaces the oldest.
  for (std::size_t i = 1; i <= ResolutionMemo::kEntries; ++i)
    memo.keep(builds.changed, std::vector<std::string>{"x", std::to_string(i)}, lookups(2));
  CHECK(memo.find(builds.changed, std::vector<std::string>{"x"}) == nullptr);
  for (std::size_t i = 1; i <= ResolutionMemo::kEntries; ++i)
    CHECK(memo.find(builds.changed, std::vector<std::string>{"x", std::to_string(i)}) != nullptr);
}

TEST_CASE("Filter answers from the snapshot it loaded, whatever an earlier request kept") {
  // Two snapshots of one node: all 8 GPUs free, then 6 of them in use. The same names body is
  // filtered on each in turn; a kept lookup of the first must never answer on the second.
  const auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  gte::ClusterSnapshotBuilder builder(policy);
  builder.setSynced(true);
  builder.upsertNode(gte::testing::makeDgx1Volta(gte::testing::FixtureState().withName("dgx")));
  const auto free = builder.build();
  builder.upsertNode(gte::testing::makeDgx1Volta(
      gte::testing::FixtureState().withName("dgx").withUsed("11111100")));
  const auto busy = builder.build();
  REQUIRE(free != busy);

  gte::ClusterSnapshotConstSharedPtr current = free;
  gte::testing::SnapshotBackend backend(
      gte::testing::SnapshotBackend::Source([&current] { return current; }));
  gte::ExtenderService service([policy] { return policy; }, &backend, nullptr);
  const std::string body =
      gte::testing::namesArgsJson(gte::testing::makeGpuPod("train", 4), {"dgx", "not-cached"});

  for (int round = 0; round < 2; ++round) {
    current = free;
    json answer = json::parse(service.filter(body).body);
    CHECK(answer["NodeNames"] == json({"dgx"}));
    CHECK(answer["FailedAndUnresolvableNodes"].contains("not-cached"));
    CHECK(json::parse(service.prioritize(body).body)[0]["Score"].get<int>() > 0);

    current = busy;
    answer = json::parse(service.filter(body).body);
    CHECK(answer["NodeNames"].empty());
    CHECK(answer["FailedNodes"].contains("dgx"));
    CHECK(json::parse(service.prioritize(body).body)[0]["Score"] == 0);
  }
}
