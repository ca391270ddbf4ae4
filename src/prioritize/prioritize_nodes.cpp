#include "prioritize/prioritize_nodes.h"

#include "core/node_decider.h"
#include "prioritize/wire_scale.h"

namespace gte {

HostScores prioritizeNodes(const PodDemand* demand, std::span<const NodeCandidate> nodes,
                           const Policy& policy) {
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
    if (node.state != nullptr) {
      terms = decide.terms(node);
      rank.fits = terms.fits();
      rank.linkQuality = terms.linkQuality;
      rank.score = decide.score(terms);
    }
    scores.push_back({node.name, rank.score, 0, terms});
    ranked.push_back(rank);
  }
  const std::vector<int> wire = wireScores(ranked, policy.linkFirst);
  for (std::size_t i = 0; i < scores.size(); ++i) {
    scores[i].wire = wire[i];
  }
  return scores;
}

}  // namespace gte
