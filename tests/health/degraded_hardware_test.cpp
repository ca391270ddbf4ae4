// Degraded hardware (health/degraded_hardware.h, docs/health.md): a GPU or NVLink the agent marks
// degraded stays usable, but multi-GPU sets holding it are scored as their PCIe path, so pods go
// to an equal healthy set wherever one exists; single-GPU pods, min-link and the policy's
// `health` keys behave as documented.
#include <catch2/catch_test_macros.hpp>

#include <string>

#include "core/fit.h"
#include "core/plain_answers.h"
#include "core/predict_allocation.h"
#include "core/score_node.h"
#include "health/degraded_hardware.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"

namespace gte {
namespace {

using testing::FixtureState;

PodDemand gpusDemand(std::int64_t k, const Policy& policy,
                     const std::vector<std::pair<std::string, std::string>>& annotations = {}) {
  Result<PodDemand> demand = parsePodDemand(testing::makeGpuPod("p", k, annotations), policy);
  REQUIRE(demand);
  return *demand;
}

// The DGX-1V's 28 pairs, all `1` but the pair (i, j) marked `mark`.
std::string linkMarks(int i, int j, char mark) {
  std::string out(static_cast<std::size_t>(pairCount(8)), '1');
  out[static_cast<std::size_t>(pairIndex(i, j, 8))] = mark;
  return out;
}

NodeInfo withLinkMarks(NodeInfo node, const std::string& marks) {
  node.labels.insert_or_assign("gputopo.dev/nvlh", marks);
  return node;
}

// The first two GPUs of the device plugin's 2-GPU pick on the empty node.
std::pair<int, int> pluginPair(const NodeState& state) {
  const GpuMask pick = state.whole[2].devicePlugin.gpus;
  const int first = std::countr_zero(pick);
  return {first, std::countr_zero(pick & (pick - 1))};
}

TEST_CASE("a pair the agent marks degraded is scored as its PCIe path", "[core][health]") {
  const Policy policy = defaultPolicy();
  const auto healthy = buildNodeState(testing::makeDgx1Volta(), {}, policy);
  const auto [a, b] = pluginPair(*healthy);
  REQUIRE(healthy->topology.linkClass(a, b) == LinkClass::kNvlink);
  const auto marked =
      buildNodeState(withLinkMarks(testing::makeDgx1Volta(), linkMarks(a, b, 'd')), {}, policy);
  // The device plugin does not know: it still hands over the same pair.
  REQUIRE(marked->whole[2].devicePlugin.gpus == healthy->whole[2].devicePlugin.gpus);
  const ScoreTerms before = scoreTerms(gpusDemand(2, policy), *healthy);
  const ScoreTerms after = scoreTerms(gpusDemand(2, policy), *marked);
  CHECK(after.linkQuality < before.linkQuality);
  CHECK(scoreNode(gpusDemand(2, policy), *marked, policy) <
        scoreNode(gpusDemand(2, policy), *healthy, policy));
  // Placement regret sees the set as avoided, and the precomputed answer says the same.
  CHECK(setQualityOf(gpusDemand(2, policy), *marked).avoided);
  CHECK_FALSE(setQualityOf(gpusDemand(2, policy), *healthy).avoided);
  const PlainAnswers answers = precomputePlainAnswers(*marked, policy);
  CHECK(answers.forGpus(2).set().avoided);
  CHECK(answers.forGpus(2).terms(Strategy::kBinpack).linkQuality == after.linkQuality);
  CHECK(answers.forGpus(2).terms(Strategy::kBinpack).brokenSets ==
        precomputePlainAnswers(*healthy, policy).forGpus(2).terms(Strategy::kBinpack).brokenSets);
  // A down pair reads the same; a mark on a pair the pod does not take changes nothing.
  const auto down =
      buildNodeState(withLinkMarks(testing::makeDgx1Volta(), linkMarks(a, b, '0')), {}, policy);
  CHECK(scoreTerms(gpusDemand(2, policy), *down).linkQuality == after.linkQuality);
  const auto elsewhere =
      buildNodeState(withLinkMarks(testing::makeDgx1Volta(), linkMarks(4, 5, 'd')), {}, policy);
  REQUIRE((elsewhere->whole[2].devicePlugin.gpus & (bitOf(4) | bitOf(5))) == 0);
  CHECK(scoreTerms(gpusDemand(2, policy), *elsewhere).linkQuality == before.linkQuality);
}

TEST_CASE("a degraded GPU serves single-GPU pods and weighs down sets", "[core][health]") {
  const Policy policy = defaultPolicy();
  const auto healthy = buildNodeState(testing::makeDgxH100(), {}, policy);
  const auto [a, b] = pluginPair(*healthy);
  std::string health(8, '1');
  health[static_cast<std::size_t>(a)] = 'd';
  const auto degraded =
      buildNodeState(testing::makeDgxH100(FixtureState().withHealth(health)), {}, policy);
  CHECK(degraded->freeCount == 8);
  CHECK(degraded->gpuHealth(a) == GpuHealth::kDegraded);
  CHECK(scoreNode(gpusDemand(1, policy), *degraded, policy) ==
        scoreNode(gpusDemand(1, policy), *healthy, policy));
  CHECK(scoreTerms(gpusDemand(2, policy), *degraded).linkQuality <
        scoreTerms(gpusDemand(2, policy), *healthy).linkQuality);
  // min-link still counts the NVLink: a warning does not refuse a pod that needs the set.
  CHECK(checkFit(gpusDemand(8, policy, {{"gputopo.dev/min-link", "nvlink"}}), *degraded, policy)
            .fits());
  (void)b;
}

TEST_CASE("the health policy refuses degraded GPUs or ignores degraded links",
          "[core][health][policy]") {
  Policy refuse = defaultPolicy();
  refuse.health.degradedGpus = DegradedGpus::kRefuse;
  const auto node = testing::makeDgxH100(FixtureState().withHealth("d1111111"));
  const auto refused = buildNodeState(node, {}, refuse);
  CHECK(refused->freeCount == 7);
  CHECK((refused->usableMask & bitOf(0)) == 0);

  Policy ignore = defaultPolicy();
  ignore.health.degradedLinks = DegradedLinks::kIgnore;
  const auto marked = withLinkMarks(testing::makeDgx1Volta(), linkMarks(0, 3, 'd'));
  CHECK(buildNodeState(marked, {}, ignore)->avoided.gpus == 0);
  CHECK(buildNodeState(marked, {}, defaultPolicy())->avoided.gpus == (bitOf(0) | bitOf(3)));
}

TEST_CASE("a cordoned link is no NVLink for placement", "[core][health]") {
  const Policy policy = defaultPolicy();
  const auto cordoned =
      buildNodeState(withLinkMarks(testing::makeDgx1Volta(), linkMarks(0, 3, 'c')), {}, policy);
  CHECK(cordoned->topology.linkClass(0, 3) != LinkClass::kNvlink);
  CHECK(cordoned->topology.installedNvlinks(0, 3) > 0);
  // The quad {0,1,2,3} is no longer all-NVLink: the largest free clique shrinks.
  const auto healthy = buildNodeState(testing::makeDgx1Volta(), {}, policy);
  CHECK(healthy->largestNvlinkClique == 4);
  CHECK(cordoned->largestNvlinkClique == 4);  // the other quad {4,5,6,7} still is
  const auto both =
      buildNodeState(withLinkMarks(testing::makeDgx1Volta(),
                                   [] {
                                     std::string marks = linkMarks(0, 3, 'c');
                                     marks[static_cast<std::size_t>(pairIndex(4, 7, 8))] = 'c';
                                     return marks;
                                   }()),
                     {}, policy);
  CHECK(both->largestNvlinkClique == 3);
}

TEST_CASE("scoredWeakest counts only the avoided pairs at their PCIe level", "[core][health]") {
  GpuTopology topo = blankTopology(TopologySource::kLabelsV1, 4, MigMode::kNotCapable);
  topo.linksKnown = true;
  for (int i = 0; i < 4; ++i) {
    for (int j = i + 1; j < 4; ++j) {
      topo.nvlinks[static_cast<std::size_t>(pairIndex(i, j, 4))] = 2;
      topo.pcie[static_cast<std::size_t>(pairIndex(i, j, 4))] =
          j - i == 1 ? PcieLevel::kPix : PcieLevel::kSys;
    }
  }
  topo.linkHealth.assign(static_cast<std::size_t>(pairCount(4)), LinkHealth::kOk);
  topo.linkHealth[static_cast<std::size_t>(pairIndex(0, 1, 4))] = LinkHealth::kDegraded;
  const AvoidedPairs avoided = avoidedPairs(topo, HealthPolicy{}, 0);
  CHECK(avoided.holds(bitOf(0) | bitOf(1)));
  CHECK_FALSE(avoided.holds(bitOf(0) | bitOf(2)));
  CHECK(scoredWeakest(avoided, topo, bitOf(0) | bitOf(1), LinkClass::kNvlink) == LinkClass::kPix);
  CHECK(scoredWeakest(avoided, topo, bitOf(2) | bitOf(3), LinkClass::kNvlink) ==
        LinkClass::kNvlink);
  // Links unknown: nothing is avoided (nothing is ranked by links there).
  topo.linksKnown = false;
  CHECK(avoidedPairs(topo, HealthPolicy{}, 0).gpus == 0);
}

}  // namespace
}  // namespace gte
