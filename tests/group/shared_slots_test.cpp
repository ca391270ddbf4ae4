// A pod group's slots on a node whose device plugin shares its GPUs (docs/groups.md#shared-gpus):
// its free replicas over the member's count, no NVLink slot, and replica sets, not whole GPUs.
#include <catch2/catch_test_macros.hpp>
#include <string>
#include <vector>

#include "core/gpu_sharing.h"
#include "core/node_state.h"
#include "core/pod_demand.h"
#include "group/group_slots.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"

namespace gte {
namespace {

using testing::FixtureState;

NodeInfo sliced(const std::string& replicas, const std::string& tenants) {
  return testing::makeSlicedDgxH100(replicas, tenants);
}

PodDemand gpus(int k) {
  Result<PodDemand> demand = parsePodDemand(testing::makeGpuPod("p", k), defaultPolicy());
  REQUIRE(demand);
  return *demand;
}

TEST_CASE("a group's slots on a shared node are its free replicas, and its sets are replicas",
          "[core]") {
  const Policy policy = defaultPolicy();
  NodeUsage usage;
  usage.replicas = {2};  // placed since the agent's pass
  const NodeStateConstSharedPtr state = buildNodeState(sliced("4", "33332200"), usage, policy);
  REQUIRE(state->freeReplicas == 14);
  // Members of 2 replicas: 7 fit one after another; of 4: 3.
  CHECK(groupSlotCount(gpus(2), *state, policy, 255) == 7);
  CHECK(groupSlotCount(gpus(4), *state, policy, 255) == 3);
  CHECK(countGroupSlots(*state, policy).any[1] == 7);
  // Three 4-replica members: each holds 4 replicas and no whole GPU, counted on top of the
  // replicas already laid (the fourth would find 2 left).
  const std::vector<PodDemand> members(4, gpus(4));
  const std::vector<Allocation> sets = groupSlotSets(*state, members, policy);
  REQUIRE(sets.size() == 3);
  for (const Allocation& set : sets) {
    CHECK(set.gpus.empty());
    CHECK(set.replicas == 4);
  }
}

TEST_CASE("a shared board's slots: none for NVLink members, one per member's replicas", "[group]") {
  const Policy policy = defaultPolicy();
  const NodeStateConstSharedPtr shared = buildNodeState(sliced("4", ""), {}, policy);
  const NodeStateConstSharedPtr whole =
      buildNodeState(testing::makeDgxH100(FixtureState().withName("whole")), {}, policy);
  // No NVLink slot for a min-link member there (filter refuses it); any slot per four free
  // replicas (32 of them: 8), not per four whole GPUs.
  CHECK(countGroupSlots(*shared, policy).nvlink[3] == 0);
  CHECK(countGroupSlots(*whole, policy).nvlink[3] == 2);
  CHECK(countGroupSlots(*shared, policy).any[3] == 8);
  CHECK(countGroupSlots(*whole, policy).any[3] == 2);
}

}  // namespace
}  // namespace gte
