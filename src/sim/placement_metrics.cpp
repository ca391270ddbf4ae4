#include "sim/placement_metrics.h"

#include <algorithm>
#include <bit>

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

// A placed pod of `size.gpus` GPUs: its link class, and whether a feasible node offered better.
void countPlaced(SizeMetrics& size, const PodPlacement& placement) {
  ++size.placed;
  if (size.gpus >= 2) {
    size.fullyNvlink += placement.weakest == LinkClass::kNvlink ? 1 : 0;
    size.missed += placement.weakest < placement.bestOffered ? 1 : 0;
    size.crossSocket += placement.weakest == LinkClass::kSys ? 1 : 0;
  }
}

LevelGroupMetrics& levelEntry(std::vector<LevelGroupMetrics>& levels, const std::string& name) {
  const auto found = std::find_if(levels.begin(), levels.end(),
                                  [&](const LevelGroupMetrics& l) { return l.level == name; });
  if (found != levels.end()) {
    return *found;
  }
  levels.push_back(LevelGroupMetrics{});
  levels.back().level = name;
  return levels.back();
}

void countGroup(GroupMetrics& groups, const std::string& level, const ArrivalOutcome& outcome) {
  LevelGroupMetrics& entry = levelEntry(groups.byLevel, level);
  ++entry.arrived;
  groups.fitOneModel += outcome.fitsOneModel ? 1 : 0;
  groups.oneModelOfFit += outcome.placed && outcome.fitsOneModel && outcome.modelsUsed == 1 ? 1 : 0;
  groups.groupsPlaced += outcome.placed ? 1 : 0;
  groups.mixedModels += outcome.placed && outcome.modelsUsed > 1 ? 1 : 0;
  entry.fitOne += outcome.fitsOneDomain ? 1 : 0;
  if (!outcome.placed) {
    entry.refusedWithRoom += outcome.fitsTotal ? 1 : 0;
    entry.refusedFitOne += outcome.fitsOneDomain ? 1 : 0;
    return;
  }
  ++entry.placed;
  groups.planMismatches += outcome.planMismatches;
  const bool whole = outcome.domainsUsed == 1;
  entry.whole += whole ? 1 : 0;
  entry.split += outcome.domainsUsed > 1 ? 1 : 0;
  entry.wholeOfFitOne += whole && outcome.fitsOneDomain ? 1 : 0;
  for (const PodPlacement& member : outcome.pods) {
    if (member.weakest == LinkClass::kUnknown) {
      continue;  // a 1-GPU member
    }
    ++groups.multiGpuMembers;
    groups.membersNvlink += member.weakest == LinkClass::kNvlink ? 1 : 0;
    if (const auto k = static_cast<std::size_t>(std::popcount(member.gpus));
        k < groups.membersBySize.size()) {
      ++groups.membersBySize[k];
      groups.nvlinkBySize[k] += member.weakest == LinkClass::kNvlink ? 1 : 0;
    }
    groups.membersMissed += member.weakest < member.bestOffered ? 1 : 0;
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
    countPlaced(size, placement);
  }
  if (!run.placements.empty()) {
    metrics.mig.sliceUtilisation =
        percentOf(run.placements.back().allocatedMigSlices, run.capacityMigSlices);
  }
  std::sort(metrics.bySize.begin(), metrics.bySize.end(),
            [](const SizeMetrics& a, const SizeMetrics& b) { return a.gpus < b.gpus; });
  return metrics;
}

RunMetrics summariseGroups(const GroupRun& run, std::span<const TimedArrival> arrivals,
                           std::size_t measureFrom) {
  RunMetrics metrics;
  GroupMetrics& groups = metrics.groups;
  groups.present = true;
  groups.utilisation = run.utilisation;
  for (const GroupLevel& level : run.levels) {  // innermost first, whatever arrives first
    levelEntry(groups.byLevel, levelShortName(level.label));
  }
  for (std::size_t i = measureFrom; i < run.outcomes.size() && i < arrivals.size(); ++i) {
    const TimedArrival& arrival = arrivals[i];
    const ArrivalOutcome& outcome = run.outcomes[i];
    if (arrival.members > 0) {
      groups.anyModel = groups.anyModel || arrival.pod.gpuProduct.empty();
      countGroup(groups,
                 outcome.level < 0
                     ? std::string("none")
                     : levelShortName(run.levels[static_cast<std::size_t>(outcome.level)].label),
                 outcome);
      continue;
    }
    if (arrival.pod.gpus == 0) {
      continue;
    }
    ++groups.singlePods;
    groups.singleGpusAsked += arrival.pod.gpus;
    SizeMetrics& size = sizeEntry(metrics.bySize, arrival.pod.gpus);
    ++size.pods;
    if (!outcome.placed) {
      ++groups.singlePodsFailed;
      ++size.failed;
      continue;
    }
    groups.singleGpusPlaced += arrival.pod.gpus;
    countPlaced(size, outcome.pods.front());
  }
  std::erase_if(groups.byLevel, [](const LevelGroupMetrics& level) { return level.arrived == 0; });
  std::sort(metrics.bySize.begin(), metrics.bySize.end(),
            [](const SizeMetrics& a, const SizeMetrics& b) { return a.gpus < b.gpus; });
  return metrics;
}

}  // namespace gte::sim
