// The one per-node decision (core/node_decider.h): decide() answers what its building blocks
// answer (checkFit, scoreTerms, weightedScore, setQualityOf, predictAllocation), only the parts a
// door asks for, and a group member's answer on a node as an input: a planned node fits and ranks
// first, a refused node carries the group's verdict, an unresolved candidate is unresolvable.
#include <catch2/catch_test_macros.hpp>
#include <random>
#include <string>
#include <vector>

#include "core/fit.h"
#include "core/node_decider.h"
#include "core/node_state.h"
#include "core/pod_demand.h"
#include "core/predict_allocation.h"
#include "core/score_node.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"
#include "support/pod_fixtures.h"

namespace gte {
namespace {

using testing::FixtureState;

std::string randomUse(std::mt19937& rng, int gpus) {
  std::string out(static_cast<std::size_t>(gpus), '0');
  for (char& c : out)
    c = rng() % 3 == 0 ? '1' : '0';
  return out;
}

std::vector<NodeInfo> machines(std::mt19937& rng) {
  return {testing::makeDgxH100(FixtureState().withName("h100").withUsed(randomUse(rng, 8))),
          testing::makeDgx1Volta(FixtureState().withName("v100").withUsed(randomUse(rng, 8))),
          testing::make4xPcieL40s(FixtureState().withName("l40s").withUsed(randomUse(rng, 4))),
          testing::makeDgxA100(FixtureState().withName("a100").withUsed(randomUse(rng, 8)))};
}

std::vector<PodInfo> pods() {
  std::vector<PodInfo> out;
  for (int k = 1; k <= 8; ++k) {
    out.push_back(testing::makeGpuPod("p", k));
    out.push_back(testing::makeGpuPod("p", k, {{"gputopo.dev/min-link", "nvlink"}}));
    out.push_back(testing::makeGpuPod("p", k, {{"gputopo.dev/numa", "single"}}));
  }
  return out;
}

TEST_CASE("decide() answers what its building blocks answer, the parts asked", "[core]") {
  const Policy policy = defaultPolicy();
  std::mt19937 rng(11);
  for (int round = 0; round < 20; ++round) {
    for (const NodeInfo& machine : machines(rng)) {
      const NodeStateConstSharedPtr state = buildNodeState(machine, {}, policy);
      const NodeCandidate candidate{machine.name, state.get(), {}, nullptr};
      for (const PodInfo& pod : pods()) {
        const Result<PodDemand> demand = parsePodDemand(pod, policy);
        REQUIRE(demand);
        const NodeDecider decider(*demand, policy);
        NodePlacement placed;
        const NodeDecision whole = decider.decide(candidate, kWholeDecision, &placed);
        const FitOutcome fit = checkFit(*demand, *state, policy);
        const ScoreTerms terms = scoreTerms(*demand, *state);
        CHECK(whole.resolved);
        CHECK(whole.route == PodRoute::kDevicePlugin);
        CHECK(whole.group == GroupAnswers::Kind::kDecide);
        CHECK(whole.fit.verdict == fit.verdict);
        CHECK(whole.fit.reason == fit.reason);
        CHECK(whole.terms.linkQuality == terms.linkQuality);
        CHECK(whole.terms.packing == terms.packing);
        CHECK(whole.score == weightedScore(terms, policy));
        if (terms.fits()) CHECK(whole.set == setQualityOf(*demand, *state));
        CHECK(placed.allocation == predictAllocation(*demand, *state));
        CHECK(placed.devicePluginPick == wholeGpuPick(*demand, *state));
        CHECK_FALSE(placed.dra);

        // Only the parts asked: filter's verdict leaves the score at its default, and
        // prioritize's score leaves the verdict at its default.
        const NodeDecision verdict = decider.decide(candidate, DecisionPart::kVerdict);
        CHECK(verdict.fit.verdict == fit.verdict);
        CHECK(verdict.terms.packing == -1);
        CHECK(verdict.score == 0);
        const NodeDecision score = decider.decide(candidate, DecisionPart::kScore);
        CHECK(score.fit.fits());
        CHECK(score.score == whole.score);
      }
    }
  }
}

TEST_CASE("decide() takes a group member's answer on each candidate as an input", "[core]") {
  const Policy policy = defaultPolicy();
  const NodeStateConstSharedPtr full = buildNodeState(
      testing::makeDgxH100(FixtureState().withName("full").withUsed("11111111")), {}, policy);
  const NodeStateConstSharedPtr free =
      buildNodeState(testing::makeDgxH100(FixtureState().withName("free")), {}, policy);
  const std::vector<NodeCandidate> candidates = {
      {"planned", full.get(), {}, nullptr},  // its GPUs are held for the member
      {"refused", free.get(), {}, nullptr},
      {"decided", free.get(), {}, nullptr},
      {"unknown", nullptr, "node not in the extender's cache", nullptr}};
  GroupAnswers group;
  group.nodes = {GroupAnswers::Kind::kPlanned, GroupAnswers::Kind::kRefused,
                 GroupAnswers::Kind::kDecide, GroupAnswers::Kind::kDecide};
  group.refusal = {0, 0, 0, 0};
  group.refusals = {{Verdict::kUnschedulable, "outside the group's rack"}};
  const Result<PodDemand> demand = parsePodDemand(testing::makeGpuPod("m", 4), policy);
  REQUIRE(demand);
  const NodeDecider decider(*demand, policy, &group);

  const NodeDecision planned = decider.decide(candidates[0], 0);
  CHECK(planned.group == GroupAnswers::Kind::kPlanned);
  CHECK(planned.fit.fits());
  CHECK(planned.score == kMaxNodeScore);

  const NodeDecision refused = decider.decide(candidates[1], 1);
  CHECK(refused.group == GroupAnswers::Kind::kRefused);
  CHECK(refused.fit.verdict == Verdict::kUnschedulable);
  CHECK(group.refusals[refused.groupRefusal].text == "outside the group's rack");
  CHECK(refused.score == 0);

  const NodeDecision decided = decider.decide(candidates[2], 2);
  CHECK(decided.fit.fits());
  CHECK(decided.score == weightedScore(scoreTerms(*demand, *free), policy));

  const NodeDecision unknown = decider.decide(candidates[3], 3);
  CHECK_FALSE(unknown.resolved);
  CHECK(unknown.fit.verdict == Verdict::kUnresolvable);

  // Outside the request's candidates the group does not answer: the full node refuses the pod.
  CHECK_FALSE(decider.decide(candidates[0]).fit.fits());
}

}  // namespace
}  // namespace gte
