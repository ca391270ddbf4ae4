// NodeNames lookups kept between requests (service/resolution_memo.h): a request finds the
// lookups of an earlier one only for exactly the same names on the same snapshot, and the answers
// always follow the snapshot the request loaded, never a kept one.
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

TEST_CASE("The memo finds the lookups of the same names on the same snapshot only") {
  const auto a = std::make_shared<const gte::ClusterSnapshot>();
  const auto b = std::make_shared<const gte::ClusterSnapshot>();
  const std::vector<std::string> names{"node-1", "node-2", "node-10"};
  ResolutionMemo memo;
  CHECK(memo.find(a, names) == nullptr);

  memo.keep(a, names, lookups(3));
  const auto kept = memo.find(a, names);
  REQUIRE(kept != nullptr);
  CHECK(kept->found[2].state == lookups(3)[2].state);

  CHECK(memo.find(b, names) == nullptr);  // another snapshot
  CHECK(memo.find(a, std::vector<std::string>{"node-2", "node-1", "node-10"}) == nullptr);
  // Same bytes, other boundaries; a name that is a prefix of the kept one; one name fewer.
  CHECK(memo.find(a, std::vector<std::string>{"node-1node-2", "", "node-10"}) == nullptr);
  CHECK(memo.find(a, std::vector<std::string>{"node-1", "node-2", "node-1"}) == nullptr);
  CHECK(memo.find(a, std::vector<std::string>{"node-1", "node-2"}) == nullptr);
}

TEST_CASE("The memo keeps a few lists of the newest snapshot and never holds a snapshot") {
  auto old = std::make_shared<const gte::ClusterSnapshot>();
  const std::weak_ptr<const gte::ClusterSnapshot> oldWatch = old;
  const auto now = std::make_shared<const gte::ClusterSnapshot>();
  ResolutionMemo memo;
  memo.keep(old, std::vector<std::string>{"x"}, lookups(1));
  CHECK(memo.find(old, std::vector<std::string>{"x"}) != nullptr);
  // The memo does not keep a snapshot alive: its entries match no later snapshot, even one at
  // the freed one's address.
  old.reset();
  CHECK(oldWatch.expired());
  const auto reused = std::make_shared<const gte::ClusterSnapshot>();
  CHECK(memo.find(reused, std::vector<std::string>{"x"}) == nullptr);

  memo.keep(now, std::vector<std::string>{"x"}, lookups(1));
  CHECK(memo.find(now, std::vector<std::string>{"x"}) != nullptr);

  // Up to kEntries lists of one snapshot; one more replaces the oldest.
  for (std::size_t i = 1; i <= ResolutionMemo::kEntries; ++i)
    memo.keep(now, std::vector<std::string>{"x", std::to_string(i)}, lookups(2));
  CHECK(memo.find(now, std::vector<std::string>{"x"}) == nullptr);
  for (std::size_t i = 1; i <= ResolutionMemo::kEntries; ++i)
    CHECK(memo.find(now, std::vector<std::string>{"x", std::to_string(i)}) != nullptr);
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
