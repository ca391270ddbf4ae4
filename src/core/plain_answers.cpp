#include "core/plain_answers.h"

#include "core/fit.h"
#include "core/node_state.h"
#include "core/predict_allocation.h"
#include "dra_placement/dra_node_state.h"
#include "policy/policy.h"

namespace gte {

PlainAnswers precomputePlainAnswers(const NodeState& state, const Policy& policy) {
  PlainAnswers answers;
  // The node side of routeOn's kClaimsAsGpus (readsClaimsAsGpus). The catalog it also compares is
  // the snapshot's: a catalog change re-derives every DRA node before the snapshot that carries it
  // is published.
  std::int16_t draPlainClass = -1;
  if (state.allocator == GpuAllocator::kDra && state.dra && !state.dra->plainUninterpretable &&
      state.dra->plainClass >= 0 && state.dra->plainClass <= INT16_MAX) {
    draPlainClass = static_cast<std::int16_t>(state.dra->plainClass);
  }
  for (std::int64_t k = 1; k <= PlainAnswers::kMaxGpus; ++k) {
    PodDemand demand;
    demand.gpus = k;
    demand.sharedPlacement = policy.sharing.placement;
    PlainAnswer& answer = answers.byGpus[static_cast<std::size_t>(k - 1)];
    const FitOutcome fit = checkFit(demand, state, policy);
    answer.verdict = fit.verdict;
    answer.reason = fit.reason;
    demand.strategy = Strategy::kBinpack;
    const ScoreTerms binpack = scoreTerms(demand, state);
    demand.strategy = Strategy::kSpread;
    const ScoreTerms spread = scoreTerms(demand, state);
    // Only packing depends on the strategy.
    answer.linkQuality = static_cast<std::int16_t>(binpack.linkQuality);
    answer.numaLocality = static_cast<std::int16_t>(binpack.numaLocality);
    answer.packingBinpack = static_cast<std::int16_t>(binpack.packing);
    answer.packingSpread = static_cast<std::int16_t>(spread.packing);
    answer.brokenSets = static_cast<std::uint8_t>(binpack.brokenSets);
    const SetQuality set = setQualityOf(demand, state);
    answer.setWeakest = set.weakest;
    if (set.avoided) answer.brokenSets |= PlainAnswer::kSetAvoided;
    answer.setBandwidthGBps = set.bandwidthGBps;
    answer.draPlainClass = draPlainClass;
  }
  return answers;
}

}  // namespace gte
