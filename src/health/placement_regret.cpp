#include "health/placement_regret.h"

#include <algorithm>
#include <bit>

#include "topology/link_bandwidth.h"
#include "topology/pair_table.h"

namespace gte {
namespace {

// The same comparisons for bandwidth and for link class: below what a candidate that fit offered
// (only on degraded hardware the policy avoids, else the extender's or kube-scheduler's choice, by
// the worst top-ranked set), else below what the cluster offered (nothing the pod could use was
// better).
template <class Key>
RegretReason reasonBy(const PlacementDecision& decision, const SetQuality& got, Key key) {
  if (key(got) < key(decision.feasibleBest)) {
    if (decision.avoidedAny && key(got) >= key(decision.healthyBest)) {
      return RegretReason::kAvoidedDegraded;
    }
    return key(got) < key(decision.topWorst) ? RegretReason::kSchedulerOverride
                                             : RegretReason::kPolicyTradeoff;
  }
  return key(got) < key(decision.clusterBest) ? RegretReason::kNoBetterFit : RegretReason::kNone;
}

}  // namespace

std::string_view regretReasonName(RegretReason reason) noexcept {
  switch (reason) {
    case RegretReason::kNoBetterFit:
      return "no_better_fit";
    case RegretReason::kPolicyTradeoff:
      return "policy_tradeoff";
    case RegretReason::kSchedulerOverride:
      return "scheduler_override";
    case RegretReason::kAvoidedDegraded:
      return "avoided_degraded";
    case RegretReason::kNone:
      break;
  }
  return "none";
}

PlacementRegret placementRegret(const PlacementDecision& decision, const SetQuality& got) {
  PlacementRegret regret;
  if (!got.known() || !decision.clusterBest.known()) return regret;
  regret.measured = true;
  const double best = decision.clusterBest.bandwidthGBps;
  regret.ratio = std::clamp(1.0 - static_cast<double>(got.bandwidthGBps) / best, 0.0, 1.0);
  regret.reason = reasonBy(decision, got, [](const SetQuality& s) { return s.bandwidthGBps; });
  regret.classReason = reasonBy(decision, got, [](const SetQuality& s) { return s.weakest; });
  regret.belowBestClass = regret.classReason != RegretReason::kNone;
  return regret;
}

SetQuality heldSetQuality(const GpuTopology& topology, const std::vector<int>& indices) {
  GpuMask gpus = 0;
  for (const int gpu : indices) {
    if (gpu < 0 || gpu >= std::min(topology.gpuCount, kMaxGpus)) return SetQuality{};
    gpus |= bitOf(gpu);
  }
  if (gpuCountOf(gpus) < 2 || !topology.linksKnown) return SetQuality{};
  SetQuality quality{LinkClass::kNvlink, 0};
  forEachPair(gpus, [&](int i, int j) {
    quality.weakest = std::min(quality.weakest, topology.linkClass(i, j));
  });
  quality.bandwidthGBps = static_cast<std::uint16_t>(PairBandwidths(topology).set(gpus));
  return quality;
}

}  // namespace gte
