#include "sim/sharing_report.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gte::sim {
namespace {

// The value at `quantile` (0..1) of sorted `values`, nearest rank.
double nearestRank(const std::vector<int>& values, double quantile) {
  if (values.empty()) return 0;
  const auto rank =
      static_cast<std::size_t>(std::ceil(quantile * static_cast<double>(values.size())));
  return values[std::min(values.size(), std::max<std::size_t>(rank, 1)) - 1];
}

}  // namespace

SharingFigures measureSharing(const SimRun& run, std::span<const SimPod> arrivals) {
  SharingFigures out;
  const auto sharedNode = [&run](int node) {
    return node >= 0 && static_cast<std::size_t>(node) < run.finalStates.size() &&
           run.finalStates[static_cast<std::size_t>(node)]->sharesGpus;
  };
  for (std::size_t i = 0; i < arrivals.size() && i < run.placements.size(); ++i) {
    const SimPod& pod = arrivals[i];
    const PodPlacement& placed = run.placements[i];
    if (pod.gpus <= 0) continue;
    if (!pod.exclusive) {
      ++out.sharedPods;
      out.sharedPlaced += placed.node >= 0 ? 1 : 0;
      out.sharedOnWhole += placed.node >= 0 && !sharedNode(placed.node) ? 1 : 0;
      continue;
    }
    ++out.exclusivePods;
    if (placed.node < 0) continue;
    ++out.exclusivePlaced;
    const bool shared = sharedNode(placed.node);
    out.exclusiveOnShared += shared ? 1 : 0;
    if (pod.gpus >= 2) {
      ++out.multiGpuExclusivePlaced;
      const LinkClass got = shared ? LinkClass::kUnknown : placed.weakest;
      out.multiGpuExclusiveMisses += got < placed.bestOffered ? 1 : 0;
    }
  }
  std::vector<int> tenants;
  for (const NodeStateConstSharedPtr& state : run.finalStates) {
    if (!state->sharesGpus) continue;
    out.replicasAdvertised += std::max<std::int64_t>(0, state->allocatableGpus);
    for (GpuMask rest = state->usableMask; rest != 0; rest &= rest - 1) {
      const int held = state->tenantsOf(std::countr_zero(rest));
      tenants.push_back(held);
      out.replicasHeld += held;
    }
  }
  std::sort(tenants.begin(), tenants.end());
  out.tenantsP50 = nearestRank(tenants, 0.5);
  out.tenantsP95 = nearestRank(tenants, 0.95);
  out.tenantsMax = tenants.empty() ? 0 : tenants.back();
  return out;
}

}  // namespace gte::sim
