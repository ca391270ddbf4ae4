#include "prioritize/prioritize_nodes.h"

#include "core/node_decider.h"
#include "prioritize/wire_scale.h"

namespace gte {

namespace {

// Wire scores of a group member: its held slots first (the top score), every other node's score
// scaled below them, so the plan wins whatever kube-scheduler's own plugins add.
constexpr int kPlannedWire = 10;
constexpr int kOtherWireCeiling = 8;

}  // namespace

HostScores prioritizeNodes(const PodDemand* demand, std::span<const NodeCandidate> nodes,
                           const Policy& policy, const GroupAnswers* group) {
  HostScores scores;
  scores.reserve(nodes.size());
  std::vector<RankedScore> ranked;
  ranked.reserve(nodes.size());
  // A pod whose request did not parse scores 0 everywhere, as one that asks for nothing.
  static const PodDemand kNothing;
  const NodeDecider decide(demand != nullptr ? *demand : kNothing, policy);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (i + kCandidatePrefetchAhead < nodes.size()) {
      decide.prefetch(nodes[i + kCandidatePrefetchAhead]);
    }
    const NodeCandidate& node = nodes[i];
    RankedScore rank;
    ScoreTerms terms;
    const GroupAnswers::Kind kind = group ? group->nodes[i] : GroupAnswers::Kind::kDecide;
    if (kind == GroupAnswers::Kind::kPlanned) {
      rank.score = kMaxNodeScore;  // ranked apart below
    } else if (node.state != nullptr && kind == GroupAnswers::Kind::kDecide) {
      terms = decide.terms(node);
      rank.fits = terms.fits();
      rank.linkQuality = terms.linkQuality;
      rank.score = decide.score(terms);
    }
    scores.push_back({node.name, rank.score, 0, terms});
    ranked.push_back(rank);
  }
  const std::vector<int> wire = wireScores(ranked, policy.linkFirst);
  const bool planned = group != nullptr && group->anyPlanned();
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (!planned) {
      scores[i].wire = wire[i];
    } else if (group->nodes[i] == GroupAnswers::Kind::kPlanned) {
      scores[i].wire = kPlannedWire;
    } else {
      scores[i].wire = wire[i] * kOtherWireCeiling / kPlannedWire;
    }
  }
  return scores;
}

}  // namespace gte
