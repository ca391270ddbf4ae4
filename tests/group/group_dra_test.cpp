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
#include <span>
#include <string>
#include <vector>

#include "core/dra_decision.h"
#include "core/node_charges.h"
#include "core/node_decider.h"
#include "core/pod_route.h"
#include "dra/claim_shaping.h"
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

// The plan of `members` over `nodes`, under the policy's levels.
GroupPlan planOn(std::span<const GroupPlanNode> nodes, std::span<const PodDemand> members,
                 const Policy& policy, bool explain = false) {
  GroupPlanInput in;
  in.group = "ml/job";
  in.levels = policy.groups.levels;
  in.nodes = nodes;
  in.members = members;
  in.explain = explain;
  return planGroup(in, policy);
}

// DRA DGX-1V nodes, each in a rack (the block level's domain id) or in none (-1), as a plan sees
// them: states, slot facts and plan nodes, in the order given. One DRA cluster publishes every
// node's slice (one class catalog, as in a real cluster).
struct DraRacks {
  struct Spec {
    std::string name;
    std::vector<int> order;
    int rack = -1;
  };
  DraRacks(const Policy& policy, const std::vector<Spec>& specs) {
    for (const Spec& spec : specs) {
      names.push_back(spec.name);
      cluster.addSliceJson(testing::draDgx1Slice(spec.name, spec.order));
    }
    for (const Spec& spec : specs) {
      states.push_back(cluster.nodeState(
          testing::makeDgx1Volta(FixtureState().withName(spec.name).withoutDevicePlugin()),
          policy));
      const std::uint32_t rack = spec.rack < 0 ? kNoDomain : static_cast<std::uint32_t>(spec.rack);
      facts.push_back(
          nodeGroupFacts(*states.back(), {kNoDomain, kNoDomain, rack, kNoDomain}, policy));
    }
    for (std::size_t n = 0; n < specs.size(); ++n)
      nodes.push_back({names[n], states[n].get(), &facts[n]});
  }

  // The plan for `size` members like `member`, under the policy's levels.
  GroupPlan plan(std::size_t size, const PodDemand& member, const Policy& policy) const {
    const std::vector<PodDemand> members(size, member);
    return planOn(nodes, members, policy, true);
  }

  // Kept alive: a state's DRA devices point into the cluster's slices, plan nodes into names.
  testing::DraCluster cluster;
  std::vector<std::string> names;
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
  const GroupPlan plan = planOn(nodes, members, policy);
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

// ml/<name>: `claim-template --gpus <gpus>`'s claim (tiers same-pcie-root, same-numa-node, any),
// before allocation.
dra::ResourceClaimConstSharedPtr tieredClaim(const std::string& name, int gpus) {
  dra::ShapedClaimOptions options;
  options.gpus = gpus;
  auto spec = dra::shapedClaimSpec(options);
  REQUIRE(spec.ok());
  auto claim = std::make_shared<dra::ResourceClaim>();
  claim->name = name;
  claim->ns = "ml";
  claim->spec = std::move(spec).value();
  return claim;
}

PodDemand claimMember(const testing::DraCluster& cluster, const std::string& claim,
                      const Policy& policy) {
  auto demand = parsePodDemand(testing::makeClaimPod("p-" + claim, "ml", {{"gpus", claim}}), policy,
                               cluster.objects.get());
  REQUIRE(demand.ok());
  REQUIRE(demand->draClaims());
  return std::move(demand).value();
}

TEST_CASE("tiered claim members: their slots are the first-fit's sets, one after another",
          "[core][group-slots][dra]") {
  // The slice lists 0 5 1 4 2 7 3 6: "2 GPUs of the class" takes 0 5 (PCIe) first, the tiers'
  // same-pcie-root takes 0 1, then 4 5, 2 3, 7 6 (roots n / 2: each pair NVLinked).
  const Policy policy = defaultPolicy();
  DraDgx1 dgx("dgx", kPcieOrder);
  dgx.cluster.objects->add(tieredClaim("t", 2));
  dgx.cluster.objects->add(testing::draGpuClaim("p", 2));
  const auto state = dgx.state(policy);
  const PodDemand tiered = claimMember(dgx.cluster, "t", policy);
  const PodDemand plain = claimMember(dgx.cluster, "p", policy);
  REQUIRE(plannedByFirstFit(tiered));
  REQUIRE(routeOn(tiered, *state) == PodRoute::kDraFirstFit);
  REQUIRE(routeOn(plain, *state) == PodRoute::kClaimsAsGpus);
  CHECK(groupSlotCount(tiered, *state, policy, 8) == 4);
  CHECK(groupSlotCount(tiered, *state, policy, 3) == 3);
  const std::vector<PodDemand> four(4, tiered);
  const std::vector<Allocation> sets = groupSlotSets(*state, four, policy);
  REQUIRE(sets.size() == 4);
  CHECK(maskOf(sets[0]) == mask({0, 1}));
  CHECK(maskOf(sets[1]) == mask({4, 5}));
  CHECK(maskOf(sets[2]) == mask({2, 3}));
  CHECK(maskOf(sets[3]) == mask({6, 7}));
  // The per-node decision predicts the first of them for the first member.
  CHECK(DraDecider(*tiered.dra).place(*state).pick.gpus == mask({0, 1}));
  const std::vector<PodDemand> plainFour(4, plain);
  CHECK(maskOf(groupSlotSets(*state, plainFour, policy).front()) == mask({0, 5}));
  // A fifth member has no set: every GPU is taken.
  const std::vector<PodDemand> five(5, tiered);
  CHECK(groupSlotSets(*state, five, policy).size() == 4);
}

TEST_CASE("a hold on a DRA node is taken for claims too: the first-fit skips it",
          "[core][dra][group-holds]") {
  const Policy policy = defaultPolicy();
  DraDgx1 dgx("dgx", kPcieOrder);
  dgx.cluster.objects->add(tieredClaim("t", 2));
  auto charges = std::make_shared<NodeCharges>();
  charges->put(PodCharge{holdChargeUid("ml/job", 0), true, Allocation{true, {0, 1}, {}}, 0});
  const auto held = dgx.state(policy, charges);
  const PodDemand tiered = claimMember(dgx.cluster, "t", policy);
  // filter's prediction and the planner's next set both skip the held 0 1: 4 5.
  CHECK(DraDecider(*tiered.dra).place(*held).pick.gpus == mask({4, 5}));
  CHECK(maskOf(groupSlotSets(*held, std::vector<PodDemand>{tiered}, policy).front()) ==
        mask({4, 5}));
  CHECK(groupSlotCount(tiered, *held, policy, 8) == 3);
  // The group's own member sees its hold free again.
  const auto own = nodeStateWithout(*held, {holdChargeUid("ml/job", 0)}, policy);
  CHECK(DraDecider(*tiered.dra).place(*own).pick.gpus == mask({0, 1}));
}

TEST_CASE("a group of tiered claim members stays in one rack on NVLink pairs",
          "[core][group-plan][dra]") {
  // Rack 0: two DGX-1V whose slices list 0 5 1 4 2 7 3 6 (first-fit "2 GPUs" pairs are all
  // PCIe); rack 1: one that lists 3 0 6 5 1 2 4 7 (all NVLink). Six 2-GPU members: rack 1 holds
  // four, rack 0 eight. Members asking "2 GPUs of the class" get 0-5, 1-4, 2-7, 3-6 and 0-5, 1-4
  // in rack 0; members of the tiered template get root pairs, each NVLinked, in the same rack.
  const Policy policy = defaultPolicy();
  DraRacks racks(policy, {{"a0", kPcieOrder, 0}, {"a1", kPcieOrder, 0}, {"b0", kNvlinkOrder, 1}});
  racks.cluster.objects->add(tieredClaim("t", 2));
  racks.cluster.objects->add(testing::draGpuClaim("p", 2));
  const PodDemand tiered = claimMember(racks.cluster, "t", policy);
  const PodDemand plain = claimMember(racks.cluster, "p", policy);
  // The DGX-1V's NVLink neighbours (the file's header).
  const GpuMask neighbours[] = {mask({1, 2, 3, 4}), mask({0, 2, 3, 5}), mask({0, 1, 3, 6}),
                                mask({0, 1, 2, 7}), mask({0, 5, 6, 7}), mask({1, 4, 6, 7}),
                                mask({2, 4, 5, 7}), mask({3, 4, 5, 6})};
  const auto nvlinked = [&](const Allocation& set) {
    return set.gpus.size() == 2 &&
           (neighbours[static_cast<std::size_t>(set.gpus[0])] & bitOf(set.gpus[1])) != 0;
  };
  const GroupPlan plan = racks.plan(6, tiered, policy);
  REQUIRE(plan.status == GroupPlanStatus::kPlanned);
  REQUIRE(plan.slots.size() == 6);
  const std::vector<std::pair<std::string, GpuMask>> expected = {
      {"a0", mask({0, 1})}, {"a0", mask({4, 5})}, {"a0", mask({2, 3})},
      {"a0", mask({6, 7})}, {"a1", mask({0, 1})}, {"a1", mask({4, 5})}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(plan.slots[i].node == expected[i].first);
    CHECK(maskOf(plan.slots[i].allocation) == expected[i].second);
    CHECK(nvlinked(plan.slots[i].allocation));
  }
  const GroupPlan plainPlan = racks.plan(6, plain, policy);
  REQUIRE(plainPlan.status == GroupPlanStatus::kPlanned);
  CHECK(std::none_of(plainPlan.slots.begin(), plainPlan.slots.end(),
                     [&](const PlannedSlot& slot) { return nvlinked(slot.allocation); }));
}

TEST_CASE("tiered claim members of two sizes are planned member by member",
          "[core][group-plan][dra]") {
  // One DGX-1V listing 0 5 1 4 2 7 3 6 (roots n / 2, NUMA n / 4). The 4-GPU member is placed
  // first: no root holds four GPUs, so its same-numa-node tier takes 0 1 2 3; then the 2-GPU
  // member's same-pcie-root tier takes 5 4 (the predecessor's GPUs taken for it).
  const Policy policy = defaultPolicy();
  DraRacks racks(policy, {{"a0", kPcieOrder, 0}});
  racks.cluster.objects->add(tieredClaim("t2", 2));
  racks.cluster.objects->add(tieredClaim("t4", 4));
  const std::vector<PodDemand> members = {claimMember(racks.cluster, "t2", policy),
                                          claimMember(racks.cluster, "t4", policy)};
  const GroupPlan plan = planOn(racks.nodes, members, policy);
  REQUIRE(plan.status == GroupPlanStatus::kPlanned);
  REQUIRE(plan.slots.size() == 2);
  for (const PlannedSlot& slot : plan.slots) {
    CHECK(slot.node == "a0");
    CHECK(maskOf(slot.allocation) == (slot.member == 1 ? mask({0, 1, 2, 3}) : mask({4, 5})));
  }
}

TEST_CASE("tiered claims that take devices other than whole GPUs are placed one by one",
          "[core][group-plan][dra]") {
  // The node publishes two VFIO devices beside its GPUs: tiers of the VFIO class would get no
  // slot anywhere, so the group is not planned (rather than refused under a required level).
  const Policy policy = defaultPolicy();
  testing::DraCluster cluster;
  cluster.addSliceJson(testing::draDgx1Slice("a0", kPcieOrder));
  cluster.addSliceJson(
      testing::draSliceJson("a0-vfio", "a0", "a0-vfio",
                            R"([{"name":"vfio-0","attributes":{"type":{"string":"vfio"}}},)"
                            R"({"name":"vfio-1","attributes":{"type":{"string":"vfio"}}}])"));
  auto claim = std::make_shared<dra::ResourceClaim>(*tieredClaim("v", 2));
  for (dra::DeviceRequestShape& tier : claim->spec.requests.front().alternatives)
    tier.deviceClassName = "vfio.gpu.nvidia.com";
  cluster.objects->add(claim);
  const auto state = cluster.nodeState(
      testing::makeDgx1Volta(FixtureState().withName("a0").withoutDevicePlugin()), policy);
  const PodDemand member = claimMember(cluster, "v", policy);
  REQUIRE(plannedByFirstFit(member));
  REQUIRE(DraDecider(*member.dra).place(*state).outcome == DraOutcome::kPlaced);
  CHECK(groupSlotCount(member, *state, policy, 8) == 0);
  const NodeGroupFacts facts = nodeGroupFacts(*state, {kNoDomain, kNoDomain, 0, kNoDomain}, policy);
  const GroupPlanNode nodes[] = {{"a0", state.get(), &facts}};
  const std::vector<PodDemand> members(2, member);
  const GroupPlan plan = planOn(nodes, members, policy);
  CHECK(plan.status == GroupPlanStatus::kUnsupported);
  CHECK(plan.reason ==
        "members whose DRA claims take MIG or other devices than whole GPUs are not planned: "
        "placed one by one");
}

TEST_CASE("claims not of one class in tiers are not planned", "[core][group-plan][dra]") {
  // A request of 2 GPUs in one tier and 4 in the next asks no fixed count.
  const Policy policy = defaultPolicy();
  DraRacks racks(policy, {{"a0", kPcieOrder, 0}});
  auto claim = std::make_shared<dra::ResourceClaim>(*tieredClaim("odd", 2));
  claim->spec.requests.front().alternatives.back().count = 4;
  racks.cluster.objects->add(claim);
  const PodDemand odd = claimMember(racks.cluster, "odd", policy);
  CHECK_FALSE(plannedByFirstFit(odd));
  const GroupPlan plan = racks.plan(2, odd, policy);
  CHECK(plan.status == GroupPlanStatus::kUnsupported);
}

}  // namespace
}  // namespace gte
