// Prioritize properties (docs/scoring.md): better links score strictly higher after the 0..10
// scaling, NVLink groups are not broken for small pods, binpack packs and spread spreads.
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

#include "core/fit.h"
#include "core/score_node.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"
#include "support/topo_matrix.h"

namespace gte {
namespace {

using testing::FixtureState;

PodDemand demandOf(const PodInfo& pod, const Policy& policy) {
  Result<PodDemand> demand = parsePodDemand(pod, policy);
  REQUIRE(demand.ok());
  return *demand;
}

int score(const PodInfo& pod, const NodeInfo& node, const Policy& policy,
          const NodeUsage& usage = {}) {
  const PodDemand demand = demandOf(pod, policy);
  const auto state = buildNodeState(node, usage, policy);
  REQUIRE(checkFit(demand, *state, policy).fits());
  return scoreNode(demand, *state, policy);
}

// Two GPUs in one NUMA node joined by one link of the given kind, nothing else different.
NodeInfo twoGpuNode(char nvl, char pci) {
  testing::MachineLabels machine;
  machine.gpus = 2;
  machine.model = "test-gpu";
  machine.fabric = nvl == '0' ? "none" : "mesh";
  machine.nvl = std::string(1, nvl);
  machine.pci = std::string(1, pci);
  machine.numa = "00";
  return testing::makeLabelsV1Node(machine, FixtureState());
}

TEST_CASE("worked example: 2-GPU pod on a DGX-1V with GPUs 2 and 5 used", "[prioritize]") {
  const Policy policy = defaultPolicy();
  // The device plugin picks {6,7} (NV2): link term 1200; NUMA 1 holds both: 1200. Packing:
  // 4 of 8 used after placement, fullness 600 * 4/8 = 300. Fragmentation over sizes 1, 2, 4, 8:
  // free {0,1,3,4,6,7} -> {0,1,3,4}, largest all-NVLink set 3 before and after: sizes 1 and 2
  // stay usable, size 4 (an NVLink quad when empty) and size 8 could use none of 6 and can use
  // none of 4: delta -2 -2 = -4, preservation 300 + 100 = 400; packing 700.
  // (60 * 1200 + 10 * 1200 + 30 * 700) * 100 / (100 * 1200) = 87.5 -> 88.
  const NodeInfo node = testing::makeDgx1Volta(FixtureState().withUsed("00100100"));
  const PodDemand demand = demandOf(testing::makeGpuPod("p", 2), policy);
  const auto state = buildNodeState(node, {}, policy);
  const ScoreTerms terms = scoreTerms(demand, *state);
  CHECK(terms.linkQuality == 1200);
  CHECK(terms.numaLocality == 1200);
  CHECK(terms.packing == 700);
  CHECK(terms.migFit == -1);
  CHECK(scoreNode(demand, *state, policy) == 88);
}

// Two GPUs joined by NVLink with the given NUMA label (one character per GPU, 'Z' unknown).
NodeInfo twoGpuNumaNode(const char* numa) {
  testing::MachineLabels machine;
  machine.gpus = 2;
  machine.model = "test-gpu";
  machine.fabric = "mesh";
  machine.nvl = std::string(1, '1');
  machine.pci = std::string(1, 'S');
  machine.numa = numa;
  return testing::makeLabelsV1Node(machine, FixtureState());
}

TEST_CASE("NUMA term: one node, two nodes, or a GPU whose node is unknown", "[prioritize]") {
  const Policy policy = defaultPolicy();
  const PodDemand demand = demandOf(testing::makeGpuPod("p", 2), policy);
  const auto numaTermOn = [&](const char* numa) {
    const auto state = buildNodeState(twoGpuNumaNode(numa), {}, policy);
    return scoreTerms(demand, *state).numaLocality;
  };
  CHECK(numaTermOn("00") == 1200);  // both GPUs in NUMA node 0
  CHECK(numaTermOn("01") == 0);     // spans two NUMA nodes
  CHECK(numaTermOn("0Z") == 600);   // cannot tell: half
  CHECK(numaTermOn("ZZ") == 600);
}

TEST_CASE("a strictly better link class scores 10 points higher", "[prioritize]") {
  const Policy policy = defaultPolicy();
  const PodInfo pod = testing::makeGpuPod("p", 2);
  // Best to worst; every other term is equal (both GPUs taken, one NUMA node).
  const std::vector<NodeInfo> nodes = {
      twoGpuNode('1', 'S'),  // NVLink
      twoGpuNode('0', 'P'),  // PIX
      twoGpuNode('0', 'Q'),  // PXB
      twoGpuNode('0', 'H'),  // PHB
      twoGpuNode('0', 'N'),  // NODE
      twoGpuNode('0', 'S'),  // SYS
      twoGpuNode('0', 'U'),  // unknown
  };
  std::vector<int> scores;
  for (const NodeInfo& node : nodes) {
    scores.push_back(score(pod, node, policy));
  }
  // Each class step is 60 * 200 / 1200 = 10 points. Packing: full after placement (600), and the
  // 2 free GPUs sizes 4 and 8 could not use are gone: delta -4, preservation 400; 95, 85, ..., 35.
  CHECK(scores == std::vector<int>{95, 85, 75, 65, 55, 45, 35});
  for (std::size_t i = 0; i + 1 < scores.size(); ++i) {
    CHECK(scores[i] > scores[i + 1]);
  }
}

TEST_CASE("a 1-GPU pod does not break up an NVLink pair", "[prioritize]") {
  const Policy policy = defaultPolicy();
  const PodInfo pod = testing::makeGpuPod("p", 1);
  // Both nodes have two free GPUs and the pod gets GPU 0 on both. On `paired` the free {0,3}
  // (NV2) was a 2-GPU NVLink set and is gone afterwards; on `apart` {0,5} (SYS) never was one.
  const int paired =
      score(pod, testing::makeDgx1Volta(FixtureState().withUsed("01101111")), policy);
  const int apart = score(pod, testing::makeDgx1Volta(FixtureState().withUsed("01111011")), policy);
  // Both: link 1200, NUMA 1200, fullness 600 * 7/8 = 525. Fragmentation over sizes 1, 2, 4, 8:
  // paired: size 2 could use the pair and cannot use the one GPU left (+1), sizes 4 and 8 could
  // use none of 2 and can use none of 1 (-1 each): delta -1, preservation 325. apart: size 2
  // (all-NVLink when empty) could not use {0,5} either (-1): delta -3, preservation 375.
  // apart  = (60*1200 + 10*1200 + 30*(525+375)) * 100 / 120000 = 92.5 -> 93
  // paired = (60*1200 + 10*1200 + 30*(525+325)) * 100 / 120000 = 91.25 -> 91
  CHECK(apart == 93);
  CHECK(paired == 91);
  CHECK(apart > paired);
}

TEST_CASE("a 1-GPU pod takes from a fragment, not from a whole NVLink node", "[prioritize]") {
  const Policy policy = defaultPolicy();
  const PodInfo pod = testing::makeGpuPod("p", 1);
  // DGX H100 (NVSwitch: every free set is all-NVLink). Link 1200 and NUMA 1200 everywhere.
  // Fragmentation over sizes 1, 2, 4, 8 (preservation 300 - 25 x delta):
  // 2 free: fullness 525; size 2 loses its pair (+1), sizes 4 and 8 -1 each: delta -1, 325 -> 850
  //         -> 91.25 -> 91.
  // 3 free: fullness 450; sizes 4 and 8 -1 each: delta -2, 350 -> 800 -> 90.
  // empty:  fullness 75; size 8 can no longer use the 7 left: delta +7, 125 -> 200 -> 75.
  const int twoFree = score(pod, testing::makeDgxH100(FixtureState().withUsed("11111100")), policy);
  const int threeFree =
      score(pod, testing::makeDgxH100(FixtureState().withUsed("11111000")), policy);
  const int empty = score(pod, testing::makeDgxH100(), policy);
  CHECK(twoFree == 91);
  CHECK(threeFree == 90);
  CHECK(empty == 75);
  CHECK(threeFree > empty);
}

TEST_CASE("binpack prefers the nearly full node, spread the empty one", "[prioritize]") {
  const Policy policy = defaultPolicy();
  const NodeInfo nearlyFull = testing::makeDgxH100(FixtureState().withUsed("11111110"));
  const NodeInfo empty = testing::makeDgxH100();
  const int fullBinpack = score(testing::makeGpuPod("p", 1), nearlyFull, policy);
  const int emptyBinpack = score(testing::makeGpuPod("p", 1), empty, policy);
  // Nearly full: fullness 600; sizes 2, 4 and 8 could not use the last GPU (-3): preservation
  // 375: 975. Empty: fullness 600 * 1/8 = 75; size 8 can no longer use the 7 left (+7): 125: 200.
  // 30 * (975 - 200) / 1200 = 19 points.
  CHECK(fullBinpack - emptyBinpack >= 10);
  CHECK(fullBinpack > emptyBinpack);

  // Spread: 1200 * free GPUs after placement / 8: 1050 vs 0, 26 points.
  const PodInfo spreadPod = testing::makeGpuPod("p", 1, {{"gputopo.dev/strategy", "spread"}});
  const int fullSpread = score(spreadPod, nearlyFull, policy);
  const int emptySpread = score(spreadPod, empty, policy);
  CHECK(emptySpread - fullSpread >= 10);
  CHECK(emptySpread > fullSpread);

  // The policy default applies to pods without the annotation.
  Policy spreading = defaultPolicy();
  spreading.defaultStrategy = Strategy::kSpread;
  CHECK(score(testing::makeGpuPod("p", 1), empty, spreading) >
        score(testing::makeGpuPod("p", 1), nearlyFull, spreading));
}

TEST_CASE("NUMA locality counts", "[prioritize]") {
  const Policy policy = defaultPolicy();
  // DGX A100: NUMA 3,3,1,1,7,7,5,5. Free {0,1} share NUMA 3; free {1,2} do not. Both are NVLink.
  const int local = score(testing::makeGpuPod("p", 2),
                          testing::makeDgxA100(FixtureState().withUsed("00111111")), policy);
  const int split = score(testing::makeGpuPod("p", 2),
                          testing::makeDgxA100(FixtureState().withUsed("10011111")), policy);
  CHECK(local - split == 10);  // 10 * 1200 / 1200
}

TEST_CASE("MIG fit quality prefers the fragmented GPU", "[prioritize][mig]") {
  Policy policy = defaultPolicy();
  policy.dynamicMig = true;
  const PodInfo pod = testing::makeMigPod("m", {{"1g.10gb", 1}});
  const int fragmented =
      score(pod,
            testing::makeDgxA100(
                FixtureState().withUsed("m0000000").withMig("10000000").withMigTokens(0, "00u05u")),
            policy);
  const int whole = score(
      pod, testing::makeDgxA100(FixtureState().withUsed("m0000000").withMig("10000000")), policy);
  CHECK(fragmented > whole);
}

TEST_CASE("scores stay in 0..100 on every capture and request size", "[prioritize]") {
  const Policy policy = defaultPolicy();
  const std::vector<NodeInfo> nodes = {
      testing::makeDgxH100(),
      testing::makeDgxA100(FixtureState().withUsed("10010011")),
      testing::makeDgx1Volta(FixtureState().withUsed("00100100")),
      testing::makeDgx1Pascal(),
      testing::make4xPcieL40s(),
      testing::makeDgx2(FixtureState().withUsed("1000000000000001")),
      testing::makeGfdNode("gfd", 8, "NVIDIA-L40S")};
  for (const NodeInfo& node : nodes) {
    const auto state = buildNodeState(node, {}, policy);
    for (int k = 0; k <= 17; ++k) {
      for (const char* strategy : {"binpack", "spread"}) {
        const PodDemand demand =
            demandOf(testing::makeGpuPod("p", k, {{"gputopo.dev/strategy", strategy}}), policy);
        const int s = scoreNode(demand, *state, policy);
        INFO(node.name << " k=" << k);
        CHECK(s >= 0);
        CHECK(s <= 100);
        CHECK((s == 0) == (k == 0 || k > state->freeCount));
      }
    }
  }
}

}  // namespace
}  // namespace gte
