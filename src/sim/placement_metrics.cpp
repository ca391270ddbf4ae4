#include "sim/placement_metrics.h"

#include <algorithm>

namespace gte::sim {
namespace {

double percentOf(std::int64_t value, std::int64_t capacity) {
  return capacity == 0 ? 0 : 100.0 * static_cast<double>(value) / static_cast<double>(capacity);
}

SizeMetrics& sizeEntry(std::vector<SizeMetrics>& sizes, int gpus) {
  const auto found = std::find_if(sizes.begin(), sizes.end(),
                                  [&](const SizeMetrics& s) { return s.gpus == gpus; });
  if (found != sizes.end()) {
    return *found;
  }
  sizes.push_back(SizeMetrics{gpus, 0, 0, 0, -1, 0, 0});
  return sizes.back();
}

}  // namespace

double allocationAt(const SimRun& run, int percent) {
  for (const PodPlacement& placement : run.placements) {
    if (placement.arrivedGpus * 100 >= run.capacityGpus * percent) {
      return percentOf(placement.allocatedGpus, run.capacityGpus);
    }
  }
  return run.placements.empty() ? 0
                                : percentOf(run.placements.back().allocatedGpus, run.capacityGpus);
}

RunMetrics summarise(const SimRun& run, std::span<const SimPod> arrivals) {
  RunMetrics metrics;
  metrics.allocationAt100 = allocationAt(run, 100);
  metrics.allocationAt130 = allocationAt(run, 130);
  metrics.fragmentation = run.fragmentation;
  for (std::size_t i = 0; i < run.placements.size() && i < arrivals.size(); ++i) {
    const PodPlacement& placement = run.placements[i];
    const int gpus = arrivals[i].gpus;
    if (gpus == 0) {
      continue;
    }
    SizeMetrics& size = sizeEntry(metrics.bySize, gpus);
    ++size.pods;
    if (placement.node < 0) {
      ++size.failed;
      const double at = percentOf(placement.arrivedGpus, run.capacityGpus);
      if (size.firstFailurePercent < 0) {
        size.firstFailurePercent = at;
      }
      if (metrics.firstFailurePercent < 0) {
        metrics.firstFailurePercent = at;
      }
      continue;
    }
    ++size.placed;
    if (gpus >= 2) {
      size.fullyNvlink += placement.weakest == LinkClass::kNvlink ? 1 : 0;
      size.missed += placement.weakest < placement.bestOffered ? 1 : 0;
    }
  }
  std::sort(metrics.bySize.begin(), metrics.bySize.end(),
            [](const SizeMetrics& a, const SizeMetrics& b) { return a.gpus < b.gpus; });
  return metrics;
}

}  // namespace gte::sim
