// The what-if's replay on live node states: where each pod goes and what it strands (the free
// all-NVLink sets before and after), N pods one after another on the evolving copy, the live
// charges kept, another policy applied by rebuilding, the deadline, and the states given left
// exactly as they were.
#include <catch2/catch_test_macros.hpp>
#include <string>
#include <vector>

#include "core/node_charges.h"
#include "policy/default_policy.h"
#include "sim/live_replay.h"
#include "support/charge_fixtures.h"
#include "support/node_fixtures.h"

using namespace gte;
using namespace gte::sim;
using testing::FixtureState;

namespace {

struct Cluster {
  std::vector<std::string> names;
  std::vector<LiveNode> nodes;

  void add(const std::string& name, NodeStateConstSharedPtr state) {
    names.push_back(name);
    nodes.push_back({{}, std::move(state)});
    for (std::size_t i = 0; i < nodes.size(); ++i)
      nodes[i].name = names[i];
  }
};

NodeStateConstSharedPtr stateOf(const NodeInfo& node, NodeChargesConstSharedPtr charges = {}) {
  const Policy policy = defaultPolicy();
  return chargeNodeState(*readNodeState(node, policy), std::move(charges), policy);
}

std::vector<ReplayPod> wholeGpuPods(int count, int gpus, const Policy& policy) {
  std::vector<ReplayPod> pods;
  for (int i = 0; i < count; ++i) {
    ReplayPod pod;
    pod.pod = SimPod("whatif-" + std::to_string(i + 1), 0, 0, gpus);
    pod.demand = simPodDemand(pod.pod, policy);
    pods.push_back(pod);
  }
  return pods;
}

const auto kAlways = [] { return true; };

// a: DGX H100, all 8 free (sets 8/4/2/1). b: DGX H100 with a bound pod on GPUs 0-3 (4 free:
// 4/2/1/0). c: DGX-1V, all free (8/4/2/0: no all-NVLink 8-set on a cube mesh).
Cluster threeNodes() {
  Cluster cluster;
  cluster.add("a", stateOf(testing::makeDgxH100(FixtureState().withName("a"))));
  cluster.add("b", stateOf(testing::makeDgxH100(FixtureState().withName("b")),
                           testing::podHolding({0, 1, 2, 3})));
  cluster.add("c", stateOf(testing::makeDgx1Volta(FixtureState().withName("c"))));
  return cluster;
}

TEST_CASE("an 8-GPU pod goes to the all-NVLink node and strands its whole 8-set", "[whatif]") {
  const Policy policy = defaultPolicy();
  const Cluster cluster = threeNodes();
  const LiveReplay replay =
      replayOnLiveStates(cluster.nodes, wholeGpuPods(1, 8, policy), policy, false, kAlways);
  // Cluster before: a 8/4/2/1 + b 4/2/1/0 + c 8/4/2/0.
  CHECK(replay.clusterBefore == FreeSetCounts{20, 10, 5, 1});
  REQUIRE(replay.steps.size() == 1);
  const ReplayStep& step = replay.steps[0];
  // Only a and c have 8 free GPUs; a's are all NVLink, c's weakest pair is not, and the link
  // class comes first in the wire score.
  CHECK(step.placement.feasibleNodes == 2);
  CHECK(step.placement.node == 0);
  CHECK(step.placement.gpus == 0xFFu);
  CHECK(step.placement.weakest == LinkClass::kNvlink);
  CHECK(step.placement.wireScore == 10);
  CHECK(step.placement.tiedNodes == 1);
  CHECK(step.nodeBefore == FreeSetCounts{8, 4, 2, 1});
  CHECK(step.nodeAfter == FreeSetCounts{0, 0, 0, 0});
  CHECK(step.clusterAfter == FreeSetCounts{12, 6, 3, 0});
}

TEST_CASE("N pods land one after another on the evolving copy", "[whatif]") {
  const Policy policy = defaultPolicy();
  const Cluster cluster = threeNodes();
  const LiveReplay replay =
      replayOnLiveStates(cluster.nodes, wholeGpuPods(3, 8, policy), policy, false, kAlways);
  REQUIRE(replay.steps.size() == 3);
  // The first takes a; the second finds only c (b has 4 free), the third nothing.
  CHECK(replay.steps[0].placement.node == 0);
  CHECK(replay.steps[1].placement.node == 2);
  CHECK(replay.steps[1].placement.feasibleNodes == 1);
  CHECK(replay.steps[1].nodeBefore == FreeSetCounts{8, 4, 2, 0});
  CHECK(replay.steps[1].clusterAfter == FreeSetCounts{4, 2, 1, 0});  // b alone is left
  CHECK(replay.steps[2].placement.node == -1);
  CHECK(replay.steps[2].placement.feasibleNodes == 0);
  CHECK(replay.steps[2].clusterAfter == replay.steps[1].clusterAfter);
}

TEST_CASE("the live charges stay taken in the copy", "[whatif]") {
  const Policy policy = defaultPolicy();
  Cluster cluster;
  cluster.add("b", stateOf(testing::makeDgxH100(FixtureState().withName("b")),
                           testing::podHolding({0, 1, 2, 3})));
  const LiveReplay replay =
      replayOnLiveStates(cluster.nodes, wholeGpuPods(2, 2, policy), policy, false, kAlways);
  REQUIRE(replay.steps.size() == 2);
  // GPUs 0-3 are the bound pod's: the pairs come from 4-7.
  CHECK((replay.steps[0].placement.gpus & 0x0Fu) == 0);
  CHECK((replay.steps[1].placement.gpus & 0x0Fu) == 0);
  CHECK((replay.steps[0].placement.gpus & replay.steps[1].placement.gpus) == 0);
  CHECK(replay.steps[1].clusterAfter == FreeSetCounts{0, 0, 0, 0});
}

TEST_CASE("the replay leaves the live states exactly as they were", "[whatif]") {
  const Policy policy = defaultPolicy();
  const Cluster cluster = threeNodes();
  std::vector<NodeState> before;
  for (const LiveNode& node : cluster.nodes)
    before.push_back(*node.state);
  Policy spread = policy;
  spread.defaultStrategy = Strategy::kSpread;
  replayOnLiveStates(cluster.nodes, wholeGpuPods(3, 4, policy), policy, false, kAlways);
  replayOnLiveStates(cluster.nodes, wholeGpuPods(3, 4, spread), spread, true, kAlways);
  for (std::size_t i = 0; i < before.size(); ++i) {
    const NodeState& now = *cluster.nodes[i].state;
    CHECK(now.freeMask == before[i].freeMask);
    CHECK(now.freeCount == before[i].freeCount);
    CHECK(now.topology == before[i].topology);
    CHECK(now.charges == before[i].charges);
    CHECK(now.whole.size() == before[i].whole.size());
  }
}

TEST_CASE("another policy is applied by rebuilding every node under it", "[whatif]") {
  // x: 8 free; y: 4 of 8 free (a bound pod on 0-3). A 1-GPU pod: binpack (the default) fills y,
  // spread prefers the emptier x.
  Cluster cluster;
  cluster.add("x", stateOf(testing::makeDgxH100(FixtureState().withName("x"))));
  cluster.add("y", stateOf(testing::makeDgxH100(FixtureState().withName("y")),
                           testing::podHolding({0, 1, 2, 3})));
  const Policy binpack = defaultPolicy();
  Policy spread = binpack;
  spread.defaultStrategy = Strategy::kSpread;
  const auto packed =
      replayOnLiveStates(cluster.nodes, wholeGpuPods(1, 1, binpack), binpack, false, kAlways);
  const auto spreadOut =
      replayOnLiveStates(cluster.nodes, wholeGpuPods(1, 1, spread), spread, true, kAlways);
  CHECK(packed.steps.at(0).placement.node == 1);
  CHECK(spreadOut.steps.at(0).placement.node == 0);
}

TEST_CASE("the replay stops where keepGoing says so", "[whatif]") {
  const Policy policy = defaultPolicy();
  const Cluster cluster = threeNodes();
  int asked = 0;
  const LiveReplay replay = replayOnLiveStates(cluster.nodes, wholeGpuPods(5, 1, policy), policy,
                                               false, [&asked] { return ++asked <= 2; });
  CHECK(replay.steps.size() == 2);
}

TEST_CASE("a pod without GPUs is not placed: the extender is not asked about it", "[whatif]") {
  const Policy policy = defaultPolicy();
  const Cluster cluster = threeNodes();
  const LiveReplay replay =
      replayOnLiveStates(cluster.nodes, wholeGpuPods(1, 0, policy), policy, false, kAlways);
  REQUIRE(replay.steps.size() == 1);
  CHECK_FALSE(replay.steps[0].asksForGpus);
  CHECK(replay.steps[0].placement.node == -1);
  CHECK(replay.steps[0].clusterAfter == replay.clusterBefore);
}

}  // namespace
