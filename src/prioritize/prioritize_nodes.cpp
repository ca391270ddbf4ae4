#include "prioritize/prioritize_nodes.h"

#include <algorithm>
#include <optional>

#include "core/node_decider.h"
#include "prioritize/wire_scale.h"

namespace gte {
namespace {

// Placement regret's view of one request (prioritizeNodes' `offer`), in two parts: the best set
// over the fitting candidates, taken in the scoring loop, and the worst set among those ranked top
// (wire score 10), taken as the wire scores are written.
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

  // A candidate ranked top (wire score 10) with its set and 0..100 score.
  void top(std::string_view node, const SetQuality& set, int score) noexcept {
    if (topScore_ < 0) {
      offer_.topWorst = set;
    } else {
      offer_.topWorst.bandwidthGBps = std::min(offer_.topWorst.bandwidthGBps, set.bandwidthGBps);
      offer_.topWorst.weakest = std::min(offer_.topWorst.weakest, set.weakest);
    }
    if (score > topScore_) {
      topScore_ = score;
      offer_.topNode = node;
    }
  }

  const PlacementOffer& offer() const noexcept { return offer_; }

 private:
  PlacementOffer offer_;
  int topScore_ = -1;
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
    if (regret && wire[i] == kMaxExtenderScore)
      offered->top(nodes[i].name, sets[i], ranked[i].score);
  }
  if (regret) *offer = offered->offer();
  return scores;
}

}  // namespace gte
