// Group slots: the members of k GPUs a node takes one after another, read from the chain every
// node state precomputes, must be exactly what checkFit and predictAllocation decide for each
// member on the node its predecessors left (a state rebuilt with their GPUs taken).
#include <catch2/catch_test_macros.hpp>

#include <bit>
#include <string>
#include <vector>

#include "core/fit.h"
#include "core/node_state.h"
#include "core/predict_allocation.h"
#include "group/group_slots.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "topology/pair_table.h"

namespace gte {
namespace {

using testing::FixtureState;

// The definition: each member decided on the state rebuilt with every earlier member's GPUs.
std::vector<Allocation> oneAtATime(const NodeState& state, const PodDemand& demand,
                                   const Policy& policy) {
  std::vector<Allocation> out;
  NodeUsage usage;
  for (GpuMask rest = state.usableMask & ~state.freeMask; rest != 0; rest &= rest - 1)
    usage.gpus.push_back(std::countr_zero(rest));
  for (int i = 0; i < 32; ++i) {
    const NodeStateConstSharedPtr now = rebuildNodeState(state, usage, policy);
    if (!checkFit(demand, *now, policy).fits()) break;
    Allocation allocation = predictAllocation(demand, *now);
    addToUsage(usage, allocation);
    out.push_back(std::move(allocation));
  }
  return out;
}

std::vector<NodeInfo> machines() {
  using Make = NodeInfo (*)(const FixtureState&);
  const Make makes[] = {testing::makeDgxH100,    testing::makeDgxA100,
                        testing::makeDgx1Volta,  testing::makeDgx1Pascal,
                        testing::make4xPcieL40s, testing::makeA100PcieBridged,
                        testing::makeDgx2};
  std::vector<NodeInfo> out;
  for (const Make make : makes) {
    out.push_back(make(FixtureState()));
    out.push_back(make(FixtureState().withUsed("00100100")));
    out.push_back(make(FixtureState().withUsed("01101001")));
    out.push_back(make(FixtureState().withHealth("11011111")));
  }
  out.push_back(testing::makeDgxA100(FixtureState().withMig("11000000")));
  out.push_back(testing::makeGfdNode("gfd", 8, "NVIDIA-A100-SXM4-80GB"));
  return out;
}

TEST_CASE("chain slots equal members decided one at a time", "[core][group-slots]") {
  for (const bool allowMultiGpu : {true, false}) {
    Policy policy = defaultPolicy();
    policy.allowMultiGpuOnUnknownTopology = allowMultiGpu;
    const std::vector<NodeInfo> nodes = machines();
    for (std::size_t machine = 0; machine < nodes.size(); ++machine) {
      const NodeInfo& node = nodes[machine];
      const NodeStateConstSharedPtr state = buildNodeState(node, {}, policy);
      for (std::int64_t k = 1; k <= kChainSizes; ++k) {
        for (const std::optional<LinkClass> minLink :
             {std::optional<LinkClass>{}, std::optional{LinkClass::kNvlink},
              std::optional{LinkClass::kPix}, std::optional{LinkClass::kNode}}) {
          PodDemand demand;
          demand.gpus = k;
          demand.minLink = minLink;
          CAPTURE(machine, allowMultiGpu, k, minLink.has_value());
          const std::vector<Allocation> expected = oneAtATime(*state, demand, policy);
          const int count = groupSlotCount(demand, *state, policy, 255);
          CHECK(count == static_cast<int>(expected.size()));
          const std::vector<PodDemand> members(expected.size() + 1, demand);
          CHECK(groupSlotSets(*state, members, policy) == expected);
          if (!minLink)
            CHECK(countGroupSlots(*state, policy).any[static_cast<std::size_t>(k - 1)] == count);
          if (minLink == LinkClass::kNvlink) {
            CHECK(countGroupSlots(*state, policy).nvlink[static_cast<std::size_t>(k - 1)] == count);
          }
        }
        // NUMA-aligned members go through rebuilt states, with the same answers.
        PodDemand numa;
        numa.gpus = k;
        numa.singleNuma = true;
        const std::vector<Allocation> expected = oneAtATime(*state, numa, policy);
        CHECK(groupSlotCount(numa, *state, policy, 255) == static_cast<int>(expected.size()));
      }
    }
  }
}

TEST_CASE("slots count sets of the link class a member needs, not free GPUs",
          "[core][group-slots]") {
  const Policy policy = defaultPolicy();
  // DGX-1V: {0,1,2,3} and {4,5,6,7} are all-pairs NVLink; the eight are not.
  const auto dgx1 = buildNodeState(testing::makeDgx1Volta(FixtureState()), {}, policy);
  CHECK(countGroupSlots(*dgx1, policy).any[3] == 2);     // 8 free / 4
  CHECK(countGroupSlots(*dgx1, policy).nvlink[3] == 2);  // the two NVLink quads
  CHECK(countGroupSlots(*dgx1, policy).any[7] == 1);
  CHECK(countGroupSlots(*dgx1, policy).nvlink[7] == 0);  // 0-5, 0-6, ... are PCIe
  CHECK(countGroupSlots(*dgx1, policy).any[2] == 2);     // 8 / 3 = 2
  // Four L40S on PCIe: two 2-GPU members, none with NVLink.
  const auto l40s = buildNodeState(testing::make4xPcieL40s(FixtureState()), {}, policy);
  CHECK(countGroupSlots(*l40s, policy).any[1] == 2);
  CHECK(countGroupSlots(*l40s, policy).nvlink[1] == 0);
  CHECK(countGroupSlots(*l40s, policy).nvlink[0] == 4);  // one GPU needs no link
  // A GFD-only node: counts are known, links are not.
  const auto gfd =
      buildNodeState(testing::makeGfdNode("gfd", 8, "NVIDIA-A100-SXM4-80GB"), {}, policy);
  CHECK(countGroupSlots(*gfd, policy).any[1] == 4);
  CHECK(countGroupSlots(*gfd, policy).nvlink[1] == 0);
  Policy strict = policy;
  strict.allowMultiGpuOnUnknownTopology = false;
  const auto gfdStrict =
      buildNodeState(testing::makeGfdNode("gfd", 8, "NVIDIA-A100-SXM4-80GB"), {}, strict);
  CHECK(countGroupSlots(*gfdStrict, strict).any[1] == 0);
  CHECK(countGroupSlots(*gfdStrict, strict).any[0] == 8);
}

TEST_CASE("slot sets are the device plugin's successive picks", "[core][group-slots]") {
  const Policy policy = defaultPolicy();
  const auto h100 = buildNodeState(testing::makeDgxH100(FixtureState()), {}, policy);
  PodDemand two;
  two.gpus = 2;
  const std::vector<PodDemand> members(4, two);
  const std::vector<Allocation> sets = groupSlotSets(*h100, members, policy);
  REQUIRE(sets.size() == 4);
  // The first is the pick a lone 2-GPU pod gets; together they use all eight GPUs once.
  CHECK(sets[0] == predictAllocation(two, *h100));
  GpuMask all = 0;
  for (const Allocation& set : sets) {
    for (const int gpu : set.gpus) {
      CHECK((all & bitOf(gpu)) == 0);
      all |= bitOf(gpu);
    }
  }
  CHECK(all == 0xffu);
  // A fifth member does not fit: the answer stops at four.
  const std::vector<PodDemand> five(5, two);
  CHECK(groupSlotSets(*h100, five, policy).size() == 4);
}

}  // namespace
}  // namespace gte
