// predictAllocation: what a placed pod will take, for the usage fed back to the snapshot.
#include <catch2/catch_test_macros.hpp>

#include <vector>

#include "core/predict_allocation.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"
#include "topology/pair_table.h"

namespace gte {
namespace {

using testing::FixtureState;

PodDemand demandOf(const PodInfo& pod, const Policy& policy) {
  Result<PodDemand> demand = parsePodDemand(pod, policy);
  REQUIRE(demand.ok());
  return *demand;
}

TEST_CASE("whole GPUs: the device plugin's pick, NUMA-aligned when asked", "[snapshot][predict]") {
  const Policy policy = defaultPolicy();
  const auto state =
      buildNodeState(testing::makeDgx1Volta(FixtureState().withUsed("00100100")), {}, policy);
  const Allocation two = predictAllocation(demandOf(testing::makeGpuPod("p", 2), policy), *state);
  CHECK(two.complete);
  CHECK(two.gpus == std::vector<int>{6, 7});
  const Allocation numa = predictAllocation(
      demandOf(testing::makeGpuPod("p", 2, {{"gputopo.dev/numa", "single"}}), policy), *state);
  CHECK(numa.gpus == std::vector<int>{0, 3});
  const Allocation tooMany =
      predictAllocation(demandOf(testing::makeGpuPod("p", 7), policy), *state);
  CHECK_FALSE(tooMany.complete);

  // Feeding the prediction back as usage frees exactly those GPUs no more.
  NodeUsage usage;
  addToUsage(usage, two);
  const auto after =
      buildNodeState(testing::makeDgx1Volta(FixtureState().withUsed("00100100")), usage, policy);
  CHECK(after->freeCount == 4);
  CHECK((after->freeMask & (bitOf(6) | bitOf(7))) == 0);
}

TEST_CASE("MIG: first free instance, or a new placement under dynamic MIG", "[snapshot][predict]") {
  Policy policy = defaultPolicy();
  const NodeInfo node = testing::makeDgxA100(
      FixtureState().withUsed("mm000000").withMig("11000000").withMigTokens(0, "00u01f02f"));
  const auto staticState = buildNodeState(node, {}, policy);
  const Allocation one =
      predictAllocation(demandOf(testing::makeMigPod("m", {{"1g.10gb", 1}}), policy), *staticState);
  CHECK(one.complete);
  REQUIRE(one.mig.size() == 1);
  CHECK(one.mig[0] == MigAssignment{0, "1g.10gb", 1, false});
  const Allocation three =
      predictAllocation(demandOf(testing::makeMigPod("m", {{"1g.10gb", 3}}), policy), *staticState);
  CHECK_FALSE(three.complete);  // two free instances exist, static MIG creates none

  policy.dynamicMig = true;
  const auto dynamicState = buildNodeState(node, {}, policy);
  const Allocation mixed = predictAllocation(
      demandOf(testing::makeMigPod("m", {{"1g.10gb", 3}, {"3g.40gb", 1}}), policy), *dynamicState);
  CHECK(mixed.complete);
  REQUIRE(mixed.mig.size() == 4);
  // Largest first: the 3g goes to GPU0 at 4 (slices 0-2 are taken there: it blocks 16 of the
  // value left, where empty GPU1 would lose 24), then the two free 1g instances, then a new 1g.
  CHECK(mixed.mig[0] == MigAssignment{0, "3g.40gb", 4, true});
  CHECK(mixed.mig[1] == MigAssignment{0, "1g.10gb", 1, false});
  CHECK(mixed.mig[2] == MigAssignment{0, "1g.10gb", 2, false});
  CHECK(mixed.mig[3].createsInstance);
}

}  // namespace
}  // namespace gte
