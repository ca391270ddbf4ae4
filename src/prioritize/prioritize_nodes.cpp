#include "prioritize/prioritize_nodes.h"

#include <algorithm>
#include <optional>

#include "core/node_decider.h"
#include "prioritize/wire_scale.h"

namespace gte {
namespace {

// Placement regret's view of one request (prioritizeNodes' `offer`), in two parts: the best set
// over the fitting candidates, taken in the scoring loop, and the worst set among those ranked top
// (wire score 10), once the wire scores are known.
class OfferBuilder {
 public:
  explicit OfferBuilder(std::int64_t gpus) { offer_.gpus = gpus; }

  void fits(std::string_view node, const SetQuality& set) noexcept {
    if (offer_.bestNode.empty() || set.bandwidthGBps > offer_.feasibleBest.bandwidthGBps) {
      offer_.feasibleBest.bandwidthGBps = set.bandwidthGBps;
      offer_.bestNode = node;
    }
    offer_.feasibleBest.weakest = std::max(offer_.feasibleBest.weakest, set.weakest);
  }

  PlacementOffer finish(std::span<const NodeCandidate> nodes, std::span<const SetQuality> sets,
                        std::span<const RankedScore> ranked, std::span<const int> wire) {
    int topScore = -1;
    for (std::size_t i = 0; i < wire.size(); ++i) {
      if (wire[i] != kMaxExtenderScore) continue;
      const SetQuality& set = sets[i];
      if (topScore < 0) {
        offer_.topWorst = set;
      } else {
        offer_.topWorst.bandwidthGBps = std::min(offer_.topWorst.bandwidthGBps, set.bandwidthGBps);
        offer_.topWorst.weakest = std::min(offer_.topWorst.weakest, set.weakest);
      }
      if (ranked[i].score > topScore) {
        topScore = ranked[i].score;
        offer_.topNode = nodes[i].name;
      }
    }
    return offer_;
  }

 private:
  PlacementOffer offer_;
};

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
  std::optional<OfferBuilder> offered;
  if (regret) {
    sets.resize(nodes.size());
    offered.emplace(demand->gpus);
  }
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
      if (regret && rank.fits) {
        sets[i] = decide.set(node);
        offered->fits(node.name, sets[i]);
      }
    }
    scores.push_back({node.name, rank.score, 0, terms});
    ranked.push_back(rank);
  }
  const std::vector<int> wire = wireScores(ranked, policy.linkFirst);
  for (std::size_t i = 0; i < scores.size(); ++i) {
    scores[i].wire = wire[i];
  }
  if (regret) *offer = offered->finish(nodes, sets, ranked, wire);
  return scores;
}

}  // namespace gte
