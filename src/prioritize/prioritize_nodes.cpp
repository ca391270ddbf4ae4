#include "prioritize/prioritize_nodes.h"

#include <algorithm>

#include "core/node_decider.h"
#include "prioritize/wire_scale.h"

namespace gte {
namespace {

// Placement regret's view of one request (prioritizeNodes' `offer`), from each fitting
// candidate's set and its wire score.
PlacementOffer offerOf(std::int64_t gpus, std::span<const NodeCandidate> nodes,
                       std::span<const SetQuality> sets, const HostScores& scores) {
  PlacementOffer offer;
  offer.gpus = gpus;
  int topScore = -1;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (!scores[i].terms.fits()) continue;
    const SetQuality& set = sets[i];
    if (offer.bestNode.empty() || set.bandwidthGBps > offer.feasibleBest.bandwidthGBps) {
      offer.feasibleBest.bandwidthGBps = set.bandwidthGBps;
      offer.bestNode = nodes[i].name;
    }
    offer.feasibleBest.weakest = std::max(offer.feasibleBest.weakest, set.weakest);
    if (scores[i].wire != kMaxExtenderScore) continue;
    if (topScore < 0) {
      offer.topWorst = set;
    } else {
      offer.topWorst.bandwidthGBps = std::min(offer.topWorst.bandwidthGBps, set.bandwidthGBps);
      offer.topWorst.weakest = std::min(offer.topWorst.weakest, set.weakest);
    }
    if (scores[i].score > topScore) {
      topScore = scores[i].score;
      offer.topNode = nodes[i].name;
    }
  }
  return offer;
}

}  // namespace

HostScores prioritizeNodes(const PodDemand* demand, std::span<const NodeCandidate> nodes,
                           const Policy& policy, PlacementOffer* offer) {
  HostScores scores;
  scores.reserve(nodes.size());
  std::vector<RankedScore> ranked;
  ranked.reserve(nodes.size());
  // A pod whose request did not parse scores 0 everywhere, as one that asks for nothing.
  static const PodDemand kNothing;
  const NodeDecider decide(demand != nullptr ? *demand : kNothing, policy);
  const bool regret = offer != nullptr && demand != nullptr && demand->gpus >= 2;
  std::vector<SetQuality> sets;
  if (regret) sets.resize(nodes.size());
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
      if (regret && rank.fits) sets[i] = decide.set(node);
    }
    scores.push_back({node.name, rank.score, 0, terms});
    ranked.push_back(rank);
  }
  const std::vector<int> wire = wireScores(ranked, policy.linkFirst);
  for (std::size_t i = 0; i < scores.size(); ++i) {
    scores[i].wire = wire[i];
  }
  if (regret) *offer = offerOf(demand->gpus, nodes, sets, scores);
  return scores;
}

}  // namespace gte
