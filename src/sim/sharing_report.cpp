#include "sim/sharing_report.h"

#include "health/node_health.h"

namespace gte::sim {

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
  // The shared GPUs' figures as the operators' gauges count them (health/node_health.h).
  HealthTotals totals;
  for (const NodeStateConstSharedPtr& state : run.finalStates)
    totals.add(nodeHealth(*state));
  out.replicasAdvertised = totals.sharedReplicas;
  out.replicasHeld = totals.sharedReplicasUsed;
  out.tenantsP50 = static_cast<double>(totals.sharedTenantsAt(0.5));
  out.tenantsP95 = static_cast<double>(totals.sharedTenantsAt(0.95));
  out.tenantsMax = static_cast<int>(totals.sharedTenantsAt(1.0));
  return out;
}

}  // namespace gte::sim
