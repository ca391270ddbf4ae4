#include "core/preemption_planner.h"

#include "core/node_charges.h"
#include "core/node_decider.h"

namespace gte {
namespace {

// The per-node decision filter makes (claims by the DRA allocator's first-fit, the rest by the
// device plugin's pick), on the node as it would be with `gone` evicted.
FitOutcome fitWithout(const NodeDecider& decide, const std::vector<std::string>& gone,
                      const NodeState& state, const Policy& policy) {
  const NodeStateConstSharedPtr without = nodeStateWithout(state, gone, policy);
  return decide.decide(NodeCandidate{{}, without.get(), {}, nullptr}, DecisionPart::kVerdict).fit;
}

}  // namespace

VictimPlan planVictims(const PodDemand& demand, const std::vector<VictimInfo>& victims,
                       const NodeState& state, const Policy& policy) {
  const NodeDecider decide(demand, policy);
  std::vector<std::string> all;
  all.reserve(victims.size());
  for (const auto& v : victims)
    all.push_back(v.uid);
  VictimPlan plan;
  plan.withAllGone = fitWithout(decide, all, state, policy);
  if (!plan.helps()) return plan;

  // Greedy minimisation from the least important victim up: drop a GPU victim whenever the pod
  // still fits without evicting it. Victims stay in the scheduler's order.
  std::vector<bool> keep(victims.size(), true);
  for (std::size_t i = victims.size(); i-- > 0;) {
    if (!victims[i].holdsGpus) continue;
    keep[i] = false;
    std::vector<std::string> trial;
    for (std::size_t j = 0; j < victims.size(); ++j) {
      if (keep[j]) trial.push_back(victims[j].uid);
    }
    if (!fitWithout(decide, trial, state, policy).fits()) keep[i] = true;
  }
  for (std::size_t j = 0; j < victims.size(); ++j) {
    if (keep[j]) plan.victims.push_back(victims[j].uid);
  }
  // Nothing GPU-wise needs evicting, yet the scheduler's own dry run needs victims here (its
  // accounting disagrees with the labels): leave its choice alone rather than drop the node.
  if (plan.victims.empty() && !victims.empty()) plan.victims = std::move(all);
  return plan;
}

}  // namespace gte
