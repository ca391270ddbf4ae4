#pragma once
// What failing hardware did to a groups run (docs/placement-quality.md#failing-hardware): of the
// measured arrivals that were placed, the multi-GPU single pods and the groups a real fault hit
// during their run (fault_model.h: faultHits), and the run's allocation and free GPU-time on
// falsely marked GPUs.
#include <array>
#include <cstddef>
#include <span>

#include "sim/fault_model.h"
#include "sim/group_simulator.h"
#include "sim/group_workload.h"
#include "topology/gpu_topology.h"

namespace gte::sim {

struct FaultRunSummary {
  int multiGpuPods = 0;  // placed single pods of 2+ GPUs
  int multiGpuPodsHit = 0;
  int groups = 0;  // placed groups
  int groupsHit = 0;
  // Of the hits, those whose fault's mark was already up when the pod or group was placed (a
  // precursor the aware extender could see; the blind one never does).
  int multiGpuPodsHitMarked = 0;
  int groupsHitMarked = 0;
  // Multi-GPU single pods by GPU count (index 2..16): placed, and hit.
  std::array<int, kMaxGpus + 1> podsBySize{};
  std::array<int, kMaxGpus + 1> podsHitBySize{};
  double utilisation = 0;        // GroupRun::utilisation
  double falselyMarkedIdle = 0;  // GroupRun::falselyMarkedIdle (GPU-time)
  double capacityTime = 0;       // capacity GPUs x the measured span
  // The faults over the whole horizon.
  int gpuFailures = 0;
  int linkFailures = 0;
  int falseAlarms = 0;
};

FaultRunSummary summariseFaultRun(const GroupRun& run, std::span<const TimedArrival> arrivals,
                                  std::span<const FaultEvent> faults, std::size_t measureFrom);

}  // namespace gte::sim
