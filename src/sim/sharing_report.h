#pragma once
// What a fill of a cluster with shared inference pools (docs/sharing.md) did to isolation,
// co-tenancy and the exclusive jobs beside them (docs/placement-quality.md#shared-gpus): exclusive
// pods that landed on GPUs the device plugin shares, tenants per shared GPU at the end, the
// advertised replicas pods hold, and exclusive multi-GPU pods given a weaker link class than a
// feasible node offered. Pure: read from a SimRun and the sequence that produced it.
#include <cstdint>
#include <span>

#include "sim/simulator.h"

namespace gte::sim {

struct SharingFigures {
  std::int64_t exclusivePods = 0;  // arrived, asking for exclusive GPUs
  std::int64_t exclusivePlaced = 0;
  std::int64_t exclusiveOnShared = 0;  // placed on a node whose GPUs the device plugin shares
  std::int64_t sharedPods = 0;         // arrived, accepting shared GPUs
  std::int64_t sharedPlaced = 0;
  std::int64_t sharedOnWhole = 0;  // placed on a node whose GPUs are whole (an exclusive job's)
  std::int64_t replicasAdvertised = 0;  // every shared node's allocatable nvidia.com/gpu
  std::int64_t replicasHeld = 0;        // of those, held by pods at the end
  // Tenants per shared GPU at the end, over every usable GPU of the shared nodes (the gauges'
  // HealthTotals::sharedTenantsAt).
  double tenantsP50 = 0;
  double tenantsP95 = 0;
  int tenantsMax = 0;
  // Exclusive pods of 2+ GPUs placed, and those given a weaker link class than the best a
  // feasible node offered (on a shared node: no known set, so a miss wherever NVLink was offered).
  std::int64_t multiGpuExclusivePlaced = 0;
  std::int64_t multiGpuExclusiveMisses = 0;
};

// `arrivals` is the sequence `run` placed, in order.
SharingFigures measureSharing(const SimRun& run, std::span<const SimPod> arrivals);

}  // namespace gte::sim
