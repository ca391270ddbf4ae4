#include "service/preemption_planner.h"

#include <algorithm>
#include <catch2/catch_test_macros.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/node_state.h"
#include "core/pod_demand.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"

using gte::NodeUsage;
using gte::PodDemand;
using gte::VictimInfo;

namespace {

// A DGX-1V whose GPUs are held by pods: the victims (by UID) and, on `others`, pods that stay.
struct Node {
  std::map<std::string, std::vector<int>> victimGpus;
  std::vector<int> others;
  gte::Policy policy = gte::defaultPolicy();

  gte::WhatIfState whatIf() const {
    return [this](const std::vector<std::string>& gone) {
      NodeUsage usage;
      usage.gpus = others;
      for (const auto& [uid, gpus] : victimGpus) {
        if (std::find(gone.begin(), gone.end(), uid) != gone.end()) continue;
        usage.gpus.insert(usage.gpus.end(), gpus.begin(), gpus.end());
      }
      return gte::buildNodeState(gte::testing::makeDgx1Volta(), usage, policy);
    };
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
  const auto plan =
      gte::planVictims(demandFor(2, node.policy), {{"A"}, {"B"}}, node.whatIf(), node.policy);
  REQUIRE(plan.has_value());
  CHECK(*plan == std::vector<std::string>{"A"});  // B frees a lone GPU the pod cannot use
}

TEST_CASE("Victims without GPUs stay: the scheduler's in-tree dry run needed them") {
  Node node{{{"A", {0, 3}}, {"B", {5}}}, {1, 2, 4, 6, 7}};
  const std::vector<VictimInfo> victims = {{"A"}, {"cpu-only", false}, {"B"}};
  const auto plan =
      gte::planVictims(demandFor(2, node.policy), victims, node.whatIf(), node.policy);
  REQUIRE(plan.has_value());
  CHECK(*plan == std::vector<std::string>{"A", "cpu-only"});
}

TEST_CASE("A candidate whose victims free no satisfying set is dropped") {
  Node node{{{"B", {5}}}, {0, 1, 2, 3, 4, 6, 7}};
  CHECK_FALSE(
      gte::planVictims(demandFor(2, node.policy), {{"B"}}, node.whatIf(), node.policy).has_value());
}

TEST_CASE("Empty victim lists (newer schedulers) pass when the pod already fits") {
  Node node{{}, {0, 1}};
  const auto plan = gte::planVictims(demandFor(2, node.policy), {}, node.whatIf(), node.policy);
  REQUIRE(plan.has_value());
  CHECK(plan->empty());
  Node full{{}, {0, 1, 2, 3, 4, 5, 6, 7}};
  CHECK_FALSE(
      gte::planVictims(demandFor(2, full.policy), {}, full.whatIf(), full.policy).has_value());
}

TEST_CASE("When the pod fits without evicting any GPU pod, the scheduler's choice is kept") {
  Node node{{{"A", {0}}}, {}};
  const auto plan =
      gte::planVictims(demandFor(2, node.policy), {{"A"}}, node.whatIf(), node.policy);
  REQUIRE(plan.has_value());
  CHECK(*plan == std::vector<std::string>{"A"});
}
