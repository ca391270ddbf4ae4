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

MigMetrics::Profile& profileEntry(std::vector<MigMetrics::Profile>& profiles,
                                  const std::string& name) {
  const auto found = std::find_if(profiles.begin(), profiles.end(),
                                  [&](const MigMetrics::Profile& p) { return p.name == name; });
  if (found != profiles.end()) {
    return *found;
  }
  profiles.push_back(MigMetrics::Profile{name, 0, 0});
  return profiles.back();
}

void countMigPod(MigMetrics& mig, const SimRun& run, const SimPod& pod,
                 const PodPlacement& placement) {
  ++mig.pods;
  MigMetrics::Profile& profile = profileEntry(mig.byProfile, pod.migProfile);
  ++profile.pods;
  if (placement.node >= 0) {
    ++mig.placed;
    return;
  }
  ++mig.failed;
  ++profile.failed;
  mig.countsTrap += placement.migCountsFit ? 1 : 0;
  mig.invalid += placement.migInvalid ? 1 : 0;
  mig.lost += placement.migLegal ? 1 : 0;
  if (mig.firstFailurePercent < 0) {
    mig.firstFailurePercent = percentOf(placement.arrivedSlices, run.capacitySlices);
  }
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
    if (!arrivals[i].migProfile.empty()) {
      countMigPod(metrics.mig, run, arrivals[i], placement);
    }
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
      size.crossSocket += placement.weakest == LinkClass::kSys ? 1 : 0;
    }
  }
  if (!run.placements.empty()) {
    metrics.mig.sliceUtilisation =
        percentOf(run.placements.back().allocatedMigSlices, run.capacityMigSlices);
  }
  std::sort(metrics.bySize.begin(), metrics.bySize.end(),
            [](const SizeMetrics& a, const SizeMetrics& b) { return a.gpus < b.gpus; });
  return metrics;
}

}  // namespace gte::sim
