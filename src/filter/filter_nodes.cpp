#include "filter/filter_nodes.h"

#include <algorithm>

#include "core/node_decider.h"

namespace gte {
namespace {

// Distinct reason texts of one request, formatted once each.
class ReasonTable {
 public:
  explicit ReasonTable(std::vector<std::string>& texts) : texts_(texts) {}

  std::uint32_t forText(std::string_view text) {
    const auto it = std::find(texts_.begin(), texts_.end(), text);
    if (it != texts_.end()) return static_cast<std::uint32_t>(it - texts_.begin());
    texts_.emplace_back(text);
    return static_cast<std::uint32_t>(texts_.size() - 1);
  }

  std::uint32_t forOutcome(const FitOutcome& outcome, const PodDemand& demand) {
    for (std::size_t i = 0; i < formatted_.size(); ++i) {
      if (formatted_[i].reason == outcome.reason &&
          formatted_[i].migRequest == outcome.migRequest &&
          formatted_[i].sharing == outcome.sharing && formatted_[i].replicas == outcome.replicas) {
        return indices_[i];
      }
    }
    formatted_.push_back(outcome);
    indices_.push_back(forText(fitReasonText(outcome, demand)));
    return indices_.back();
  }

 private:
  std::vector<std::string>& texts_;
  std::vector<FitOutcome> formatted_;
  std::vector<std::uint32_t> indices_;
};

}  // namespace

std::uint64_t FilterResult::count(Verdict verdict) const noexcept {
  return static_cast<std::uint64_t>(
      std::count_if(nodes.begin(), nodes.end(),
                    [verdict](const NodeVerdict& v) { return v.verdict == verdict; }));
}

FilterResult filterNodes(const Result<PodDemand>& demand, std::span<const NodeCandidate> nodes,
                         const Policy& policy, const GroupAnswers* group) {
  FilterResult result;
  ReasonTable reasons(result.reasons);
  if (!demand) {
    // The pod rejects itself: no node can help.
    if (!nodes.empty()) {
      result.nodes.assign(nodes.size(),
                          {Verdict::kUnresolvable, reasons.forText(demand.error().message)});
    }
    return result;
  }
  result.nodes.reserve(nodes.size());
  const NodeDecider decider(*demand, policy, group);
  // A group's refusals, formatted once each (a member is refused on most nodes of a large
  // cluster, with one or two texts).
  std::vector<std::uint32_t> groupReasons;
  if (group != nullptr) {
    for (const GroupNodeRefusal& refusal : group->refusals)
      groupReasons.push_back(reasons.forText(refusal.text));
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (i + kCandidatePrefetchAhead < nodes.size()) {
      decider.prefetch(nodes[i + kCandidatePrefetchAhead]);
    }
    const NodeDecision decided = decider.decide(nodes[i], i, DecisionPart::kVerdict);
    std::uint32_t reason = 0;
    if (!decided.resolved) {
      reason = reasons.forText(nodes[i].missing);
    } else if (decided.group == GroupAnswers::Kind::kRefused) {
      reason = groupReasons[decided.groupRefusal];
    } else if (!decided.fit.fits()) {
      reason = reasons.forOutcome(decided.fit, *demand);
    }
    result.nodes.push_back({decided.fit.verdict, reason});
  }
  return result;
}

}  // namespace gte
