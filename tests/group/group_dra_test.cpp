// Pod groups on DRA nodes (docs/groups.md, "DRA nodes"): where kube-scheduler's DRA allocator
// hands out nvidia.com/gpu, member k of a group gets the first-fit set after members 0..k-1 took
// theirs, not the best free set, so the planner's slots there are counted on that chain. The node
// is a DGX-1V (hybrid cube mesh) whose slice lists its GPUs in a shuffled order. Its NVLink
// neighbours (tests/support/node_fixtures.cpp, makeDgx1Volta):
//   0: 1 2 3 4   1: 0 2 3 5   2: 0 1 3 6   3: 0 1 2 7
//   4: 0 5 6 7   5: 1 4 6 7   6: 2 4 5 7   7: 3 4 5 6
// NUMA: GPUs 0-3 on node 0, 4-7 on node 1.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "core/node_charges.h"
#include "core/node_decider.h"
#include "core/pod_route.h"
#include "group/committed_group_plan.h"
#include "group/group_domains.h"
#include "group/group_plan.h"
#include "group/group_slots.h"
#include "policy/default_policy.h"
#include "support/dra_fixtures.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"
#include "topology/pair_table.h"

namespace gte {
namespace {

using testing::FixtureState;

GpuMask mask(std::initializer_list<int> gpus) {
  GpuMask out = 0;
  for (const int gpu : gpus)
    out |= bitOf(gpu);
  return out;
}

GpuMask maskOf(const Allocation& allocation) {
  GpuMask out = 0;
  for (const int gpu : allocation.gpus)
    out |= bitOf(gpu);
  return out;
}

// A DGX-1V without the device plugin whose slice lists gpu-<n> in `order` (mapped by name).
struct DraDgx1 {
  DraDgx1(const std::string& name, const std::vector<int>& order) : node(name) {
    cluster.addSliceJson(testing::draDgx1Slice(name, order));
  }

  NodeStateConstSharedPtr state(const Policy& policy, NodeChargesConstSharedPtr charges = nullptr) {
    return cluster.nodeState(
        testing::makeDgx1Volta(FixtureState().withName(node).withoutDevicePlugin()), policy,
        std::move(charges));
  }

  std::string node;
  testing::DraCluster cluster;
};

PodDemand gpus(std::int64_t k, std::optional<LinkClass> minLink = std::nullopt,
               bool singleNuma = false) {
  PodDemand demand;
  demand.gpus = k;
  demand.minLink = minLink;
  demand.singleNuma = singleNuma;
  return demand;
}

// Slice orders of a DGX-1V whose 2-GPU first-fit chain is NVLink pairs only (0-3, 5-6, 1-2,
// 4-7), NVLink once and then PCIe (0-3, then 5-2), and PCIe only (0-5, 1-4, 2-7, 3-6).
const std::vector<int> kNvlinkOrder = {3, 0, 6, 5, 1, 2, 4, 7};
const std::vector<int> kMixedOrder = {0, 3, 5, 2, 1, 4, 6, 7};
const std::vector<int> kPcieOrder = {0, 5, 1, 4, 2, 7, 3, 6};

// DRA DGX-1V nodes, each in a rack (the block level's domain id) or in none (-1), as a plan sees
// them: states, slot facts and plan nodes, in the order given.
struct DraRacks {
  struct Spec {
    std::string name;
    std::vector<int> order;
    int rack = -1;
  };
  DraRacks(const Policy& policy, const std::vector<Spec>& specs) {
    for (const Spec& spec : specs) {
      // Kept alive: a state's DRA devices point into its node's slices.
      dgx.push_back(std::make_unique<DraDgx1>(spec.name, spec.order));
      states.push_back(dgx.back()->state(policy));
      const std::uint32_t rack = spec.rack < 0 ? kNoDomain : static_cast<std::uint32_t>(spec.rack);
      facts.push_back(
          nodeGroupFacts(*states.back(), {kNoDomain, kNoDomain, rack, kNoDomain}, policy));
    }
    for (std::size_t n = 0; n < specs.size(); ++n)
      nodes.push_back({dgx[n]->node, states[n].get(), &facts[n]});  // names outlive the specs
  }

  // The plan for `size` members like `member`, under the policy's levels.
  GroupPlan plan(std::size_t size, const PodDemand& member, const Policy& policy) const {
    const std::vector<PodDemand> members(size, member);
    GroupPlanInput in;
    in.group = "ml/job";
    in.levels = policy.groups.levels;
    in.nodes = nodes;
    in.members = members;
    in.explain = true;
    return planGroup(in, policy);
  }

  std::vector<std::unique_ptr<DraDgx1>> dgx;
  std::vector<NodeStateConstSharedPtr> states;
  std::vector<NodeGroupFacts> facts;  // complete before `nodes` points into it
  std::vector<GroupPlanNode> nodes;
};

TEST_CASE("a DRA node's group slots are the first-fit chain's", "[core][group-slots][dra]") {
  const Policy policy = defaultPolicy();
  struct Row {
    std::vector<int> order;
    std::vector<GpuMask> pairs;  // the 2-GPU chain: each member's first-fit set
    int any2, nvlink2, single2;  // slots for 2-GPU members: any, min-link nvlink, numa single
    int any4, nvlink4;
  };
  const Row rows[] = {
      // 0 5 | 1 4 | 2 7 | 3 6: no pair is NVLinked (0-5, 1-4, 2-7, 3-6 meet over PCIe) and each
      // spans both NUMA nodes, though the free GPUs hold four NVLink pairs (0-3, 1-2, 4-7, 5-6).
      // Quads 0 5 1 4 and 2 7 3 6 both miss NVLink pairs.
      {{0, 5, 1, 4, 2, 7, 3, 6},
       {mask({0, 5}), mask({1, 4}), mask({2, 7}), mask({3, 6})},
       4,
       0,
       0,
       2,
       0},
      // 3 0 | 6 5 | 1 2 | 4 7: four NVLink pairs, each in one NUMA node. Quad 3 0 6 5: 3-6 is
      // PCIe, so no NVLink quad.
      {{3, 0, 6, 5, 1, 2, 4, 7},
       {mask({0, 3}), mask({5, 6}), mask({1, 2}), mask({4, 7})},
       4,
       4,
       4,
       2,
       0},
      // 0 3 | 5 2 | ...: the first member gets NVLink pair 0-3; the second gets 5-2 (PCIe, across
      // NUMA nodes), so an NVLink (or single-NUMA) member fits once only: the chain stops there.
      // Quad 0 3 5 2 misses 0-5; quad 1 4 6 7 misses 1-4.
      {{0, 3, 5, 2, 1, 4, 6, 7},
       {mask({0, 3}), mask({2, 5}), mask({1, 4}), mask({6, 7})},
       4,
       1,
       1,
       2,
       0},
      // 0 1 2 3 | 4 5 6 7: quads of NVLink (each GPU of a quad links the other three).
      {{0, 1, 2, 3, 4, 5, 6, 7},
       {mask({0, 1}), mask({2, 3}), mask({4, 5}), mask({6, 7})},
       4,
       4,
       4,
       2,
       2},
  };
  for (const Row& row : rows) {
    DraDgx1 dgx("dgx", row.order);
    const auto state = dgx.state(policy);
    INFO("order " << row.order[0] << row.order[1] << row.order[2] << row.order[3]);
    REQUIRE(state->allocator == GpuAllocator::kDra);
    std::vector<GpuMask> chain;
    for (const ChainPick& pick : state->groupChain.forSize(2))
      chain.push_back(pick.gpus);
    CHECK(chain == row.pairs);
    CHECK(countGroupSlots(*state, policy).any[1] == row.any2);
    CHECK(countGroupSlots(*state, policy).nvlink[1] == row.nvlink2);
    CHECK(countGroupSlots(*state, policy).any[3] == row.any4);
    CHECK(countGroupSlots(*state, policy).nvlink[3] == row.nvlink4);
    // Members the chain does not cover (numa single) are rebuilt one at a time with their
    // predecessors' GPUs taken: the same first-fit sets.
    CHECK(groupSlotCount(gpus(2, std::nullopt, true), *state, policy, 8) == row.single2);
    const std::vector<PodDemand> two(4, gpus(2));
    const std::vector<Allocation> sets = groupSlotSets(*state, two, policy);
    REQUIRE(sets.size() == 4);
    for (std::size_t i = 0; i < sets.size(); ++i)
      CHECK(maskOf(sets[i]) == row.pairs[i]);
  }
}

TEST_CASE("a group of 2-GPU NVLink pods on DRA nodes goes where first-fit gives NVLink pairs",
          "[core][group-plan][dra]") {
  const Policy policy = defaultPolicy();
  // Node "mixed" first-fits 0-3 (NVLink) then 5-2 (PCIe): one NVLink slot. Node "pcie" first-fits
  // 0-5 (PCIe): none, though its best free sets are four NVLink pairs. Node "nvlink": four.
  const DraRacks cluster(policy,
                         {{"mixed", kMixedOrder}, {"pcie", kPcieOrder}, {"nvlink", kNvlinkOrder}});
  const auto plan = [&](std::size_t size) {
    return cluster.plan(size, gpus(2, LinkClass::kNvlink), policy);
  };
  // Two members: fewest slots first, so "mixed" (1) takes member 0 on 0-3, "nvlink" (4) member 1
  // on its first pair 0-3. Never "pcie".
  const GroupPlan two = plan(2);
  REQUIRE(two.status == GroupPlanStatus::kPlanned);
  REQUIRE(two.slots.size() == 2);
  CHECK(two.slots[0].node == "mixed");
  CHECK(maskOf(two.slots[0].allocation) == mask({0, 3}));
  CHECK(two.slots[1].node == "nvlink");
  CHECK(maskOf(two.slots[1].allocation) == mask({0, 3}));
  // Five: 1 + 4 NVLink slots hold them; six do not fit (the "pcie" node's best sets do not count).
  CHECK(plan(5).status == GroupPlanStatus::kPlanned);
  CHECK(plan(6).status == GroupPlanStatus::kUnplaced);
}

TEST_CASE("members that accept any link go to the rack whose first-fit sets are NVLink pairs",
          "[core][group-plan][dra]") {
  const Policy policy = defaultPolicy();
  // Rack r1 is the best fit (8 free GPUs against 16) but its node first-fits PCIe pairs (0-5,
  // 1-4); rack r2's "nvlink" node first-fits NVLink pairs (0-3, 5-6, ...). Members of a
  // data-parallel group run at the slowest one's pace: both go to r2.
  REQUIRE(policy.groups.levels[2].label == "network.topology.nvidia.com/block");
  const DraRacks cluster(
      policy, {{"pcie", kPcieOrder, 0}, {"nvlink", kNvlinkOrder, 1}, {"mixed", kMixedOrder, 1}});
  const auto plan = [&](std::size_t size) { return cluster.plan(size, gpus(2), policy); };
  const GroupPlan two = plan(2);
  REQUIRE(two.status == GroupPlanStatus::kPlanned);
  CHECK(two.level == 2);
  REQUIRE(two.slots.size() == 2);
  CHECK(two.slots[0].node == "nvlink");
  CHECK(maskOf(two.slots[0].allocation) == mask({0, 3}));
  CHECK(two.slots[1].node == "nvlink");
  CHECK(maskOf(two.slots[1].allocation) == mask({5, 6}));
  // Six members: r2 holds them only with PCIe pairs among them (4 + 1 NVLink slots), r1 cannot
  // hold them at all (4 slots): r2, by best fit as before.
  const GroupPlan six = plan(6);
  REQUIRE(six.status == GroupPlanStatus::kPlanned);
  for (const PlannedSlot& slot : six.slots)
    CHECK(slot.node != "pcie");
  // Four: both racks hold them, only r2 on NVLink pairs: r2.
  const GroupPlan four = plan(4);
  REQUIRE(four.status == GroupPlanStatus::kPlanned);
  for (const PlannedSlot& slot : four.slots)
    CHECK(slot.node == "nvlink");
}

TEST_CASE("where no rack holds every member on NVLink pairs, the rack that holds more of them",
          "[core][group-plan][dra]") {
  const Policy policy = defaultPolicy();
  // r1: "mixed" (first-fit NVLink 0-3, then PCIe) and "pcie": 16 free GPUs, 8 pair slots, 1 on
  // NVLink. r2: "nvlink" (4 NVLink pairs), "pcie-b" and "mixed-b": 24 free, 12 slots, 5 on
  // NVLink. Six members fit either rack and neither on NVLink pairs alone; r1 is the tighter one,
  // r2 gives five of them NVLink pairs against one: r2.
  const DraRacks cluster(policy, {{"mixed", kMixedOrder, 0},
                                  {"pcie", kPcieOrder, 0},
                                  {"nvlink", kNvlinkOrder, 1},
                                  {"pcie-b", kPcieOrder, 1},
                                  {"mixed-b", kMixedOrder, 1}});
  const GroupPlan six = cluster.plan(6, gpus(2), policy);
  REQUIRE(six.status == GroupPlanStatus::kPlanned);
  REQUIRE(six.slots.size() == 6);
  int onNvlinkNode = 0;
  for (const PlannedSlot& slot : six.slots) {
    CHECK((slot.node == "nvlink" || slot.node == "pcie-b" || slot.node == "mixed-b"));
    onNvlinkNode += slot.node == "nvlink" ? 1 : 0;
  }
  CHECK(onNvlinkNode == 4);  // the node whose first-fit pairs are all NVLink, filled first
  // Explain names the key that decided, not the free GPUs (r1 is the tighter rack).
  const auto r1 = std::find_if(six.domains.begin(), six.domains.end(), [](const DomainVerdict& v) {
    return v.level == 2 && v.domain == 0;
  });
  REQUIRE(r1 != six.domains.end());
  CHECK(r1->outcome == DomainVerdict::Outcome::kLessTight);
  CHECK(domainVerdictText(*r1, nullptr) ==
        "best fit prefers #1 (5 members on NVLink sets there, 1 here)");
}

TEST_CASE("a hold on a DRA node takes its GPUs; a pod's charge does not (its claim does)",
          "[core][dra][group-holds]") {
  const Policy policy = defaultPolicy();
  DraDgx1 dgx("dgx", {3, 0, 6, 5, 1, 2, 4, 7});
  auto charges = std::make_shared<NodeCharges>();
  charges->put(PodCharge{holdChargeUid("ml/job", 0), true, Allocation{true, {0, 3}, {}}, 0});
  charges->put(PodCharge{"pod-uid", true, Allocation{true, {6, 5}, {}}, 0});
  const auto held = dgx.state(policy, charges);
  // 8 - the hold's 2: the pod's 6 and 5 still count as free (no claim holds them).
  CHECK(held->freeCount == 6);
  CHECK((held->freeMask & mask({0, 3})) == 0);
  // The next 2-GPU pod's first-fit set skips the held GPUs: 6 5.
  CHECK(held->devicePluginPicks[2].gpus == mask({5, 6}));
  CHECK(chargedUsage(*held).gpus == std::vector<int>{0, 3});
  // The group's own member sees its hold free again.
  CHECK(nodeStateWithout(*held, {holdChargeUid("ml/job", 0)}, policy)->freeCount == 8);
}

TEST_CASE("claim members of N GPUs are planned as N GPUs on the DRA nodes that decide them",
          "[core][group-plan][dra]") {
  const Policy policy = defaultPolicy();
  DraDgx1 dgx("dgx", {0, 3, 5, 2, 1, 4, 6, 7});
  dgx.cluster.objects->add(testing::draGpuClaim("a", 2));
  dgx.cluster.objects->add(testing::draGpuClaim("b", 2));
  const auto state = dgx.state(policy);
  // A device-plugin DGX-1V: claims cannot be allocated there, so it has no slot for them.
  const auto plugin =
      buildNodeState(testing::makeDgx1Volta(FixtureState().withName("dp")), {}, policy);
  const auto member = [&](const std::string& claim) {
    auto demand = parsePodDemand(testing::makeClaimPod("p-" + claim, "ml", {{"gpus", claim}}),
                                 policy, dgx.cluster.objects.get());
    REQUIRE(demand.ok());
    REQUIRE(demand->draClaims());
    return std::move(demand).value();
  };
  const std::vector<PodDemand> members = {member("a"), member("b")};
  CHECK(groupSlotCount(members[0], *state, policy, 8) == 4);
  CHECK(groupSlotCount(members[0], *plugin, policy, 8) == 0);
  const GroupDomainIds none{kNoDomain, kNoDomain, kNoDomain, kNoDomain};
  const NodeGroupFacts facts[] = {nodeGroupFacts(*plugin, none, policy),
                                  nodeGroupFacts(*state, none, policy)};
  const GroupPlanNode nodes[] = {{"dp", plugin.get(), &facts[0]}, {"dgx", state.get(), &facts[1]}};
  GroupPlanInput in;
  in.group = "ml/job";
  in.levels = policy.groups.levels;
  in.nodes = nodes;
  in.members = members;
  const GroupPlan plan = planGroup(in, policy);
  REQUIRE(plan.status == GroupPlanStatus::kPlanned);
  REQUIRE(plan.slots.size() == 2);
  // First-fit: 0 3, then 5 2.
  CHECK(plan.slots[0].node == "dgx");
  CHECK(maskOf(plan.slots[0].allocation) == mask({0, 3}));
  CHECK(plan.slots[1].node == "dgx");
  CHECK(maskOf(plan.slots[1].allocation) == mask({2, 5}));
}

TEST_CASE("one route per pod and node: the planner's slots and the per-node decision agree",
          "[core][group-plan][dra]") {
  // routeOn is asked by NodeDecider (filter, bind, ...) and by the group planner: a claim pod of
  // N GPUs is N whole GPUs on the DRA node that decides it so and nothing on a device-plugin node,
  // for both.
  const Policy policy = defaultPolicy();
  DraDgx1 dgx("dgx", {0, 3, 5, 2, 1, 4, 6, 7});
  dgx.cluster.objects->add(testing::draGpuClaim("a", 2));
  const auto dra = dgx.state(policy);
  const auto plugin =
      buildNodeState(testing::makeDgx1Volta(FixtureState().withName("dp")), {}, policy);
  auto claims = parsePodDemand(testing::makeClaimPod("p-a", "ml", {{"gpus", "a"}}), policy,
                               dgx.cluster.objects.get());
  REQUIRE(claims.ok());
  CHECK(routeOn(*claims, *dra) == PodRoute::kClaimsAsGpus);
  CHECK(routeOn(*claims, *plugin) == PodRoute::kDraFirstFit);
  CHECK(routeOn(gpus(2), *plugin) == PodRoute::kDevicePlugin);
  CHECK(routeOn(gpus(2), *dra) == PodRoute::kDevicePlugin);
  // The two consumers, side by side.
  NodeDecider decider(*claims, policy);
  CHECK(decider.decide(NodeCandidate{"dgx", dra.get(), {}, nullptr}, DecisionPart::kVerdict)
            .fit.fits());
  CHECK(groupSlotCount(*claims, *dra, policy, 8) > 0);
  CHECK_FALSE(decider.decide(NodeCandidate{"dp", plugin.get(), {}, nullptr}, DecisionPart::kVerdict)
                  .fit.fits());
  CHECK(groupSlotCount(*claims, *plugin, policy, 8) == 0);
}

}  // namespace
}  // namespace gte
