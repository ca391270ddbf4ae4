// Scarce sets (core/scarce_sets.h, docs/scoring.md): a placement that breaks a free all-NVLink set
// bigger than the pod costs its node score points by how few nodes hold such a set, so equal nodes
// keep the scarcest set whole, and the precomputed answers carry the same broken sets.
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

#include "core/node_decider.h"
#include "core/plain_answers.h"
#include "core/scarce_sets.h"
#include "core/score_node.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"

namespace gte {
namespace {

using testing::FixtureState;

constexpr std::uint8_t kTwo = 1, kFour = 2, kEight = 4;  // bits of kScarceSetSizes

struct Cluster {
  std::vector<NodeStateConstSharedPtr> states;
  std::vector<NodeCandidate> candidates;
};

Cluster clusterOf(const std::vector<NodeInfo>& nodes, const Policy& policy) {
  Cluster out;
  for (const NodeInfo& node : nodes)
    out.states.push_back(buildNodeState(node, {}, policy));
  for (std::size_t i = 0; i < nodes.size(); ++i)
    out.candidates.push_back({nodes[i].name, out.states[i].get(), {}, nullptr});
  return out;
}

PodDemand gpusDemand(std::int64_t k, const Policy& policy) {
  Result<PodDemand> demand = parsePodDemand(testing::makeGpuPod("p", k), policy);
  REQUIRE(demand);
  return *demand;
}

TEST_CASE("a node holds the sets its largest free NVLink clique holds", "[core][scarce]") {
  const Policy policy = defaultPolicy();
  const auto h100 = buildNodeState(testing::makeDgxH100(), {}, policy);
  CHECK(heldSetSizes(*h100) == (kTwo | kFour | kEight));
  // The cube mesh's largest all-NVLink set is a quad.
  const auto v100 = buildNodeState(testing::makeDgx1Volta(), {}, policy);
  CHECK(heldSetSizes(*v100) == (kTwo | kFour));
  // Six free NVSwitch GPUs hold a 4-set, not an 8-set.
  const auto busy =
      buildNodeState(testing::makeDgxH100(FixtureState().withUsed("10001000")), {}, policy);
  CHECK(heldSetSizes(*busy) == (kTwo | kFour));
}

TEST_CASE("only sets bigger than the pod that its GPUs break count", "[core][scarce]") {
  const Policy policy = defaultPolicy();
  const auto h100 = buildNodeState(testing::makeDgxH100(), {}, policy);
  // 2 GPUs of an empty NVSwitch board leave 6: the 8-set is gone, the 4-set stays.
  CHECK(scoreTerms(gpusDemand(2, policy), *h100).brokenSets == kEight);
  CHECK(scoreTerms(gpusDemand(4, policy), *h100).brokenSets == kEight);
  // The pod's own size is what it needs, not what it breaks.
  CHECK(scoreTerms(gpusDemand(8, policy), *h100).brokenSets == 0);
  // A DGX-1V pair inside one quad leaves the other quad whole.
  const auto v100 = buildNodeState(testing::makeDgx1Volta(), {}, policy);
  CHECK(scoreTerms(gpusDemand(2, policy), *v100).brokenSets == 0);
  CHECK(scoreTerms(gpusDemand(4, policy), *v100).brokenSets == 0);
}

TEST_CASE("the last set costs all the points, the tenth a tenth of them", "[core][scarce]") {
  ScarceSets sets;
  sets.holders = {40, 10, 1};
  CHECK(scarceSetPoints(kEight, sets, 8) == 8);
  CHECK(scarceSetPoints(kFour, sets, 8) == 1);           // 0.8 rounds up
  CHECK(scarceSetPoints(kTwo, sets, 8) == 0);            // 0.2: plenty of pairs
  CHECK(scarceSetPoints(kFour | kEight, sets, 8) == 8);  // never more than the points
  CHECK(scarceSetPoints(kEight, sets, 0) == 0);          // off
  CHECK(scarceSetPoints(0, sets, 8) == 0);
  sets.holders = {0, 0, 0};  // a view that lacks the node still divides by at least one
  CHECK(scarceSetPoints(kEight, sets, 8) == 8);
}

TEST_CASE("a 4-GPU pod leaves the cluster's only free 8-GPU NVLink set whole", "[core][scarce]") {
  // The new user's first what-if: an empty H100 NVSwitch board, one with 2 GPUs used (one per
  // NUMA node), an empty DGX-1V, an A100 with 2 used. The empty H100 and the DGX-1V tie at 83
  // on their own terms (an NVLink quad in one NUMA node); only the H100 breaks an 8-GPU set, the
  // cluster's last.
  const Policy policy = defaultPolicy();
  const Cluster cluster =
      clusterOf({testing::makeDgxH100(FixtureState().withName("h100-empty")),
                 testing::makeDgxH100(FixtureState().withName("h100-busy").withUsed("10001000")),
                 testing::makeDgx1Volta(FixtureState().withName("dgx1v")),
                 testing::makeDgxA100(FixtureState().withName("a100-busy").withUsed("10001000"))},
                policy);
  const ScarceSets sets = countScarceSets(cluster.candidates);
  CHECK(sets.holders == std::array<std::int64_t, 3>{4, 4, 1});
  const PodDemand demand = gpusDemand(4, policy);
  const NodeDecider blind(demand, policy);
  const NodeDecider weighed(demand, policy, nullptr, &sets);
  const NodeDecision emptyBlind = blind.decide(cluster.candidates[0]);
  const NodeDecision empty = weighed.decide(cluster.candidates[0]);
  const NodeDecision dgx = weighed.decide(cluster.candidates[2]);
  CHECK(emptyBlind.score == 83);
  CHECK(dgx.score == 83);
  CHECK(empty.terms.brokenSets == kEight);
  CHECK(empty.terms.scarceSetPoints == 8);
  CHECK(empty.score == 75);
  CHECK(dgx.terms.scarceSetPoints == 0);
  // With ten such boards the tenth costs one point.
  ScarceSets plenty = sets;
  plenty.holders[2] = 10;
  const NodeDecider relaxed(demand, policy, nullptr, &plenty);
  CHECK(relaxed.decide(cluster.candidates[0]).score == 82);
}

TEST_CASE("precomputed answers carry the sets their pick breaks", "[core][scarce]") {
  const Policy policy = defaultPolicy();
  for (const std::string used : {"00000000", "10001000", "11110000", "01000000"}) {
    for (const NodeInfo& node : {testing::makeDgxH100(FixtureState().withUsed(used)),
                                 testing::makeDgx1Volta(FixtureState().withUsed(used)),
                                 testing::makeDgxA100(FixtureState().withUsed(used))}) {
      const auto state = buildNodeState(node, {}, policy);
      const PlainAnswers answers = precomputePlainAnswers(*state, policy);
      for (std::int64_t k = 1; k <= 8; ++k) {
        CAPTURE(node.name, used, k);
        const ScoreTerms computed = scoreTerms(gpusDemand(k, policy), *state);
        CHECK(answers.forGpus(k).terms(Strategy::kBinpack).brokenSets == computed.brokenSets);
      }
    }
  }
}

}  // namespace
}  // namespace gte
