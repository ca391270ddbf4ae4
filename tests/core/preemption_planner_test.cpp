// Preempt's victim plan on a node's published state: only the victims whose GPUs the pod can use
// are kept, and a node where evicting every victim still leaves no satisfying set is dropped with
// the fit check's reason.
#include "core/preemption_planner.h"

#include <catch2/catch_test_macros.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/node_charges.h"
#include "core/node_state.h"
#include "core/pod_demand.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"

using gte::PodDemand;
using gte::VictimInfo;

namespace {

// A DGX-1V whose GPUs are held by pods the cache accounts: the victims (by UID) and, on `others`,
// a pod that stays.
struct Node {
  std::map<std::string, std::vector<int>> victimGpus;
  std::vector<int> others;
  gte::Policy policy = gte::defaultPolicy();

  gte::VictimPlan plan(const PodDemand& demand, const std::vector<VictimInfo>& victims) const {
    auto charges = std::make_shared<gte::NodeCharges>();
    for (const auto& [uid, gpus] : victimGpus) {
      charges->put(gte::PodCharge{uid, true, gte::Allocation{true, gpus, {}}, 0});
    }
    if (!others.empty()) {
      charges->put(gte::PodCharge{"stays", true, gte::Allocation{true, others, {}}, 0});
    }
    const auto read = gte::readNodeState(gte::testing::makeDgx1Volta(), policy);
    const auto state = gte::chargeNodeState(*read, charges, policy);
    return gte::planVictims(demand, victims, *state, policy);
  }
};

// A victim the scheduler proposed (priority unknown, no requests known), with or without GPUs.
VictimInfo proposed(const std::string& uid, bool holdsGpus = true) {
  VictimInfo v;
  v.uid = uid;
  v.holdsGpus = holdsGpus;
  return v;
}

// A GPU pod of the node, of `priority`, holding `gpus` GPUs (nvidia.com/gpu), proposed or not.
VictimInfo pod(const std::string& uid, std::int64_t priority, std::int64_t gpus, bool byScheduler) {
  VictimInfo v;
  v.uid = uid;
  v.proposed = byScheduler;
  v.priority = priority;
  v.priorityKnown = true;
  v.requests.set("nvidia.com/gpu", gte::Quantity::fromUnits(gpus));
  return v;
}

PodDemand demandFor(std::int64_t gpus, const gte::Policy& policy) {
  auto d = gte::parsePodDemand(gte::testing::makeGpuPod("p", gpus), policy);
  REQUIRE(d.ok());
  return *d;
}

}  // namespace

TEST_CASE("Only the victims whose GPUs the pod can use are kept, in the scheduler's order") {
  // 0-3 form NVLink pairs; A holds 0 and 3 (NV2), B holds 5; every other GPU stays busy.
  Node node{{{"A", {0, 3}}, {"B", {5}}}, {1, 2, 4, 6, 7}};
  const auto plan = node.plan(demandFor(2, node.policy), {proposed("A"), proposed("B")});
  REQUIRE(plan.helps());
  CHECK(plan.victims == std::vector<std::string>{"A"});  // B frees a lone GPU the pod cannot use
}

TEST_CASE("Victims without GPUs stay: the scheduler's in-tree dry run needed them") {
  Node node{{{"A", {0, 3}}, {"B", {5}}}, {1, 2, 4, 6, 7}};
  const std::vector<VictimInfo> victims = {proposed("A"), proposed("cpu-only", false),
                                           proposed("B")};
  const auto plan = node.plan(demandFor(2, node.policy), victims);
  REQUIRE(plan.helps());
  CHECK(plan.victims == std::vector<std::string>{"A", "cpu-only"});
}

TEST_CASE("A candidate whose victims free no satisfying set is dropped, with the reason") {
  Node node{{{"B", {5}}}, {0, 1, 2, 3, 4, 6, 7}};
  const auto plan = node.plan(demandFor(2, node.policy), {proposed("B")});
  CHECK_FALSE(plan.helps());
  CHECK(plan.victims.empty());
  // One GPU free with B gone; the emptied node would hold the pod: preemption could help
  // elsewhere on it, not with these victims.
  CHECK(plan.withAllGone.verdict == gte::Verdict::kUnschedulable);
  CHECK(gte::fitReasonText(plan.withAllGone, demandFor(2, node.policy)) ==
        "insufficient free GPUs");
}

TEST_CASE("A victim the node's charges do not know frees nothing") {
  Node node{{{"B", {5}}}, {0, 1, 2, 3, 4, 6, 7}};
  CHECK_FALSE(node.plan(demandFor(1, node.policy), {proposed("stranger")}).helps());
  CHECK(node.plan(demandFor(1, node.policy), {proposed("B")}).victims ==
        std::vector<std::string>{"B"});
}

TEST_CASE("Empty victim lists (newer schedulers) pass when the pod already fits") {
  Node node{{}, {0, 1}};
  const auto plan = node.plan(demandFor(2, node.policy), {});
  REQUIRE(plan.helps());
  CHECK(plan.victims.empty());
  Node full{{}, {0, 1, 2, 3, 4, 5, 6, 7}};
  CHECK_FALSE(full.plan(demandFor(2, full.policy), {}).helps());
}

TEST_CASE("When the pod fits without evicting any GPU pod, the scheduler's choice is kept") {
  Node node{{{"A", {0}}}, {}};
  const auto plan = node.plan(demandFor(2, node.policy), {proposed("A")});
  REQUIRE(plan.helps());
  CHECK(plan.victims == std::vector<std::string>{"A"});
}

TEST_CASE("Topology-minimal: the pods that free an NVLink quad, not the ones the scheduler chose") {
  // A DGX-1V full of 1-GPU pods; quads {0,1,2,3} and {4,5,6,7}. The scheduler's dry run, by counts,
  // proposed the four least important pods, one per GPU 0, 1, 4, 5: their GPUs form no quad.
  Node node{{{"g0", {0}},
             {"g1", {1}},
             {"g2", {2}},
             {"g3", {3}},
             {"g4", {4}},
             {"g5", {5}},
             {"g6", {6}},
             {"g7", {7}}},
            {}};
  auto d = gte::parsePodDemand(
      gte::testing::makeGpuPod("p", 4, {{"gputopo.dev/min-link", "nvlink"}}), node.policy);
  REQUIRE(d.ok());
  const std::vector<VictimInfo> victims = {pod("g5", 1, 1, true),  pod("g4", 1, 1, true),
                                           pod("g1", 0, 1, true),  pod("g0", 0, 1, true),
                                           pod("g2", 1, 1, false), pod("g3", 1, 1, false),
                                           pod("g6", 2, 1, false), pod("g7", 2, 1, false)};
  const auto plan = node.plan(*d, victims);
  REQUIRE(plan.helps());
  // The quad {0,1,2,3} at priorities 0, 0, 1, 1 beats {4,5,6,7} at 1, 1, 2, 2; most important
  // first; four pods, no more: every one of them frees a GPU the pod gets.
  CHECK(plan.victims == std::vector<std::string>{"g2", "g3", "g1", "g0"});
  CHECK_FALSE(plan.searchCut);
  // Within the scheduler's proposal alone no quad is free: the old answer dropped the node.
  std::vector<VictimInfo> onlyProposed(victims.begin(), victims.begin() + 4);
  const auto narrow = node.plan(*d, onlyProposed);
  CHECK_FALSE(narrow.helps());
}

TEST_CASE("Topology-minimal: fewer pods at the same priority, and never a more important one") {
  // A holds the NV2 pair 0-3; B and C one GPU each (1 and 2). The pod wants two NVLinked GPUs.
  Node node{{{"A", {0, 3}}, {"B", {1}}, {"C", {2}}}, {4, 5, 6, 7}};
  const auto two = demandFor(2, node.policy);
  // Same priority: A alone (one pod) beats B + C (two pods, NV2 pair 1-2 too).
  auto plan = node.plan(two, {pod("B", 5, 1, true), pod("C", 5, 1, true), pod("A", 5, 2, false)});
  REQUIRE(plan.helps());
  CHECK(plan.victims == std::vector<std::string>{"A"});
  // A more important than B and C: the two less important pods go instead.
  plan = node.plan(two, {pod("B", 5, 1, true), pod("C", 5, 1, true), pod("A", 9, 2, false)});
  REQUIRE(plan.helps());
  CHECK(plan.victims == std::vector<std::string>{"B", "C"});
}

TEST_CASE("Topology-minimal: another set must free what the scheduler's victims free") {
  // The scheduler proposed A (2 GPUs, 0-3); the extender may not answer B alone (1 GPU), even if
  // the pod fit by GPUs, when the in-tree fit counted on A's CPU.
  Node node{{{"A", {0, 3}}, {"B", {1}}}, {2, 4, 5, 6, 7}};
  VictimInfo a = pod("A", 1, 2, true);
  a.requests.set("cpu", gte::Quantity::fromUnits(16));
  VictimInfo b = pod("B", 0, 1, false);
  b.requests.set("cpu", gte::Quantity::fromUnits(1));
  const auto plan = node.plan(demandFor(1, node.policy), {a, b});
  REQUIRE(plan.helps());
  CHECK(plan.victims == std::vector<std::string>{"A"});
}

TEST_CASE("Topology-minimal: of sets alike in count and priority, the one destroying least work") {
  // A holds NVLink pair 0-3, D pair 4-7 (both NV2 on the DGX-1V); everything else stays. Either
  // frees the pair the pod wants, at the same priority: the one that has run less goes.
  Node node{{{"A", {0, 3}}, {"D", {4, 7}}}, {1, 2, 5, 6}};
  const auto two = demandFor(2, node.policy);
  VictimInfo a = pod("A", 1, 2, false);
  VictimInfo d = pod("D", 1, 2, false);
  a.ranSeconds = 3600;
  d.ranSeconds = 36000;
  auto plan = node.plan(two, {a, d});
  REQUIRE(plan.helps());
  CHECK(plan.victims == std::vector<std::string>{"A"});
  a.ranSeconds = 72000;
  plan = node.plan(two, {a, d});
  REQUIRE(plan.helps());
  CHECK(plan.victims == std::vector<std::string>{"D"});
  // Priority still comes first: the younger pod of higher priority stays.
  a.ranSeconds = 60;
  a.priority = 2;
  plan = node.plan(two, {a, d});
  REQUIRE(plan.helps());
  CHECK(plan.victims == std::vector<std::string>{"D"});
}
