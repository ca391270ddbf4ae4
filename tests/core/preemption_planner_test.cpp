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

PodDemand demandFor(std::int64_t gpus, const gte::Policy& policy) {
  auto d = gte::parsePodDemand(gte::testing::makeGpuPod("p", gpus), policy);
  REQUIRE(d.ok());
  return *d;
}

}  // namespace

TEST_CASE("Only the victims whose GPUs the pod can use are kept, in the scheduler's order") {
  // 0-3 form NVLink pairs; A holds 0 and 3 (NV2), B holds 5; every other GPU stays busy.
  Node node{{{"A", {0, 3}}, {"B", {5}}}, {1, 2, 4, 6, 7}};
  const auto plan = node.plan(demandFor(2, node.policy), {{"A"}, {"B"}});
  REQUIRE(plan.helps());
  CHECK(plan.victims == std::vector<std::string>{"A"});  // B frees a lone GPU the pod cannot use
}

TEST_CASE("Victims without GPUs stay: the scheduler's in-tree dry run needed them") {
  Node node{{{"A", {0, 3}}, {"B", {5}}}, {1, 2, 4, 6, 7}};
  const std::vector<VictimInfo> victims = {{"A"}, {"cpu-only", false}, {"B"}};
  const auto plan = node.plan(demandFor(2, node.policy), victims);
  REQUIRE(plan.helps());
  CHECK(plan.victims == std::vector<std::string>{"A", "cpu-only"});
}

TEST_CASE("A candidate whose victims free no satisfying set is dropped, with the reason") {
  Node node{{{"B", {5}}}, {0, 1, 2, 3, 4, 6, 7}};
  const auto plan = node.plan(demandFor(2, node.policy), {{"B"}});
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
  CHECK_FALSE(node.plan(demandFor(1, node.policy), {{"stranger"}}).helps());
  CHECK(node.plan(demandFor(1, node.policy), {{"B"}}).victims == std::vector<std::string>{"B"});
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
  const auto plan = node.plan(demandFor(2, node.policy), {{"A"}});
  REQUIRE(plan.helps());
  CHECK(plan.victims == std::vector<std::string>{"A"});
}
