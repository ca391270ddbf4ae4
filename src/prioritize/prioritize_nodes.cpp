#include "prioritize/prioritize_nodes.h"

#include "prioritize/score_node.h"
#include "prioritize/wire_scale.h"

namespace gte {

HostScores prioritizeNodes(const PodDemand* demand, std::span<const NodeCandidate> nodes,
                           const Policy& policy) {
  HostScores scores;
  scores.reserve(nodes.size());
  std::vector<RankedScore> ranked;
  ranked.reserve(nodes.size());
  for (const NodeCandidate& node : nodes) {
    RankedScore rank;
    ScoreTerms terms;
    if (demand != nullptr && node.state != nullptr && !demand->empty()) {
      terms = scoreTerms(*demand, *node.state);
      rank.fits = terms.packing >= 0 || terms.migFit >= 0;
      rank.linkQuality = terms.linkQuality;
      rank.score = weightedScore(terms, policy);
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
