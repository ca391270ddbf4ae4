#include "prioritize/prioritize_nodes.h"

#include <algorithm>
#include <optional>

#include "core/node_decider.h"
#include "core/scarce_sets.h"
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
    offer_.avoidedAny = offer_.avoidedAny || set.avoided;
    if (!set.avoided) {
      offer_.healthyBest.bandwidthGBps =
          std::max(offer_.healthyBest.bandwidthGBps, set.bandwidthGBps);
      offer_.healthyBest.weakest = std::max(offer_.healthyBest.weakest, set.weakest);
    }
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

// Wire scores of a group member: its held slots first (the top score), every other node's score
// scaled below them, so the plan wins whatever kube-scheduler's own plugins add.
constexpr int kPlannedWire = 10;
constexpr int kOtherWireCeiling = 8;

}  // namespace

HostScores prioritizeNodes(const PodDemand* demand, std::span<const NodeCandidate> nodes,
                           const Policy& policy, const GroupAnswers* group, PlacementOffer* offer,
                           const ScarceSets* scarce) {
  HostScores scores;
  scores.reserve(nodes.size());
  std::vector<RankedScore> ranked;
  ranked.reserve(nodes.size());
  // A pod whose request did not parse scores 0 everywhere, as one that asks for nothing.
  static const PodDemand kNothing;
  // Without the cluster's counts the request's candidates are the cluster: a node holding a set
  // bigger than the pod has room for the pod, so kube-scheduler sends it unless its own checks
  // refused the node.
  ScarceSets counted;
  if (scarce == nullptr && demand != nullptr && policy.scarceSets.points > 0) {
    counted = countScarceSets(nodes);
    scarce = &counted;
  }
  const NodeDecider decider(demand != nullptr ? *demand : kNothing, policy, group, scarce);
  // A member of a group with a plan is placed by the plan, not by this ranking: placement regret
  // is not measured for it.
  const bool planned = group != nullptr && group->anyPlanned();
  const bool regret = offer != nullptr && demand != nullptr && demand->gpus >= 2 && !planned;
  const DecisionPart parts =
      regret ? DecisionPart::kScore | DecisionPart::kSet : DecisionPart::kScore;
  std::vector<SetQuality> sets;
  std::optional<OfferBuilder> offered;
  if (regret) {
    sets.resize(nodes.size());
    offered.emplace(demand->gpus);
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (i + kCandidatePrefetchAhead < nodes.size()) {
      decider.prefetch(nodes[i + kCandidatePrefetchAhead]);
    }
    const NodeDecision decided = decider.decide(nodes[i], i, parts);
    // A planned node is ranked apart below; an unresolved or refused one scores 0.
    RankedScore rank;
    rank.fits = decided.terms.fits();
    rank.linkQuality = decided.terms.linkQuality;
    rank.score = decided.score;
    if (regret && rank.fits) {
      sets[i] = decided.set;
      offered->fits(nodes[i].name, sets[i]);
    }
    scores.push_back({nodes[i].name, rank.score, 0, decided.terms});
    ranked.push_back(rank);
  }
  const std::vector<int> wire = wireScores(ranked, policy.linkFirst);
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (!planned) {
      scores[i].wire = wire[i];
    } else if (group->nodes[i] == GroupAnswers::Kind::kPlanned) {
      scores[i].wire = kPlannedWire;
    } else {
      scores[i].wire = wire[i] * kOtherWireCeiling / kPlannedWire;
    }
    if (regret && wire[i] == kMaxExtenderScore)
      offered->top(nodes[i].name, sets[i], ranked[i].score);
  }
  if (regret) *offer = offered->offer();
  return scores;
}

}  // namespace gte
