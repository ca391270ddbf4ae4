#include "service/preemption_planner.h"

#include <algorithm>

#include "core/fit.h"
#include "core/node_state.h"

namespace gte {
namespace {

bool fitsWithout(const PodDemand& demand, const std::vector<std::string>& gone,
                 const WhatIfState& whatIf, const Policy& policy) {
  auto state = whatIf(gone);
  return state && checkFit(demand, *state, policy).verdict == Verdict::kFit;
}

}  // namespace

std::optional<std::vector<std::string>> planVictims(const PodDemand& demand,
                                                    const std::vector<VictimInfo>& victims,
                                                    const WhatIfState& whatIf,
                                                    const Policy& policy) {
  std::vector<std::string> all;
  all.reserve(victims.size());
  for (const auto& v : victims)
    all.push_back(v.uid);
  if (!fitsWithout(demand, all, whatIf, policy)) return std::nullopt;

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
    if (!fitsWithout(demand, trial, whatIf, policy)) keep[i] = true;
  }
  std::vector<std::string> planned;
  for (std::size_t j = 0; j < victims.size(); ++j) {
    if (keep[j]) planned.push_back(victims[j].uid);
  }
  // Nothing GPU-wise needs evicting, yet the scheduler's own dry run needs victims here (its
  // accounting disagrees with the labels): leave its choice alone rather than drop the node.
  if (planned.empty() && !victims.empty()) return all;
  return planned;
}

}  // namespace gte
