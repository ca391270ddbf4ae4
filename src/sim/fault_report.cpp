#include "sim/fault_report.h"

namespace gte::sim {

FaultRunSummary summariseFaultRun(const GroupRun& run, std::span<const TimedArrival> arrivals,
                                  std::span<const FaultEvent> faults, std::size_t measureFrom) {
  FaultRunSummary summary;
  for (const FaultEvent& fault : faults) {
    summary.falseAlarms += fault.falseAlarm ? 1 : 0;
    summary.gpuFailures += !fault.falseAlarm && fault.part == FaultPart::kGpu ? 1 : 0;
    summary.linkFailures += !fault.falseAlarm && fault.part == FaultPart::kLink ? 1 : 0;
  }
  for (std::size_t i = measureFrom; i < arrivals.size() && i < run.outcomes.size(); ++i) {
    const TimedArrival& arrival = arrivals[i];
    const ArrivalOutcome& outcome = run.outcomes[i];
    const bool group = arrival.members > 0;
    if (!outcome.placed || (!group && arrival.pod.gpus < 2)) {
      continue;
    }
    bool hit = false;
    bool marked = false;
    for (const FaultEvent& fault : faults) {
      if (faultHits(fault, arrival, outcome.pods)) {
        hit = true;
        marked = marked || fault.markAt <= arrival.at;
      }
    }
    (group ? summary.groups : summary.multiGpuPods) += 1;
    (group ? summary.groupsHit : summary.multiGpuPodsHit) += hit ? 1 : 0;
    (group ? summary.groupsHitMarked : summary.multiGpuPodsHitMarked) += marked ? 1 : 0;
    if (!group && arrival.pod.gpus <= kMaxGpus) {
      const auto size = static_cast<std::size_t>(arrival.pod.gpus);
      summary.podsBySize[size] += 1;
      summary.podsHitBySize[size] += hit ? 1 : 0;
    }
  }
  summary.utilisation = run.utilisation;
  summary.falselyMarkedIdle = run.falselyMarkedIdle;
  summary.capacityTime = static_cast<double>(run.capacityGpus) * run.measuredSpan;
  return summary;
}

}  // namespace gte::sim
