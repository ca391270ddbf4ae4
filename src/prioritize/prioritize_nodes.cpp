#include "prioritize/prioritize_nodes.h"

#include "prioritize/score_node.h"
#include "prioritize/wire_scale.h"

namespace gte {
namespace {

ScoreTerms termsOf(const PlainAnswer& answer, Strategy strategy) {
  ScoreTerms terms;
  terms.linkQuality = answer.linkQuality;
  terms.numaLocality = answer.numaLocality;
  terms.packing = answer.packing(strategy);
  return terms;  // migFit stays -1: a plain demand asks for no MIG instance
}

}  // namespace

HostScores prioritizeNodes(const PodDemand* demand, std::span<const NodeCandidate> nodes,
                           const Policy& policy) {
  HostScores scores;
  scores.reserve(nodes.size());
  std::vector<RankedScore> ranked;
  ranked.reserve(nodes.size());
  const std::int64_t plainGpus = demand != nullptr ? PlainAnswers::gpusOf(*demand) : 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const NodeCandidate& node = nodes[i];
    if (demand != nullptr && i + kCandidatePrefetchAhead < nodes.size()) {
      prefetchCandidate(*demand, plainGpus, nodes[i + kCandidatePrefetchAhead]);
    }
    RankedScore rank;
    ScoreTerms terms;
    if (demand != nullptr && node.state != nullptr && !demand->empty()) {
      terms = plainGpus > 0 && node.plain != nullptr
                  ? termsOf(node.plain->forGpus(plainGpus), demand->strategy)
                  : scoreTerms(*demand, *node.state);
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
