#pragma once
// A timed workload of single pods and pod groups for the groups simulation
// (docs/placement-quality.md#groups). Arrivals form a Poisson process; each arrival is a group with
// probability `groupShare`, else a single pod. Single pods take their GPU count from a mix (the
// openb multigpu50 list's by default) or are drawn from a trace, and may land on any node. A group
// has 2-18 identical members (sizes from `groupSizes`), all arriving at once as a gang would, and
// targets one pool of nodes (a nodeSelector on the GPU product), chosen in proportion to the pool's
// GPUs; its members' GPU counts come from the pool's mix. Everything runs for an exponential time
// (means `singleDuration` and `groupDuration`) once placed. The arrival rate makes the offered GPU
// load (GPU-time asked per unit time) `load` times the cluster's GPUs. Deterministic for a seed.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "sim/sim_pod.h"
#include "sim/weighted_values.h"

namespace gte::sim {

struct TimedArrival {
  double at = 0;        // arrival time; the mean single-pod duration is the unit by default
  double duration = 0;  // how long it runs once placed
  SimPod pod;           // the single pod, or the shape every member of the group has
  int members = 0;      // 0: a single pod; 2+: a group of that many members
  std::string group;    // the group's name, "group-<i>"; empty for a single pod
};

struct GroupPool {
  std::string gpuProduct;     // the members' nodeSelector (labels-v1 `model`); empty: any node
  WeightedValues memberGpus;  // GPUs per member
  std::int64_t gpus = 0;      // the pool's GPUs: its share of the groups
};

struct GroupWorkloadSpec {
  WeightedValues singleGpus;            // single pods' GPU counts, unless `singleTrace` is given
  std::span<const SimPod> singleTrace;  // single pods drawn from it (with their CPU and memory)
  double groupShare = 0.1;              // share of arrivals that are groups
  WeightedValues groupSizes;            // members per group
  std::vector<GroupPool> pools;         // none: no groups
  double load = 0.85;                   // offered GPU load, share of the cluster's GPUs
  double singleDuration = 3;            // means of the exponential durations
  double groupDuration = 2;
  int arrivals = 8000;
  // Members of these GPU counts (2+) ask `min-link: nvlink` (none by default).
  std::vector<int> nvlinkMemberGpus;
};

// The openb `multigpu50` pod list's GPU counts (9,061 pods: 1,088 without GPUs, 6,989 with 1,
// 222 with 2, 206 with 4, 556 with 8).
inline constexpr std::string_view kMultigpu50Mix = "0:1088,1:6989,2:222,4:206,8:556";
// Members per group, 2-18: powers of two most often, 18 (a whole NVL72 rack of 4-GPU members) now
// and then; every size in between appears.
inline constexpr std::string_view kGroupSizeMix =
    "2:20,3:2,4:20,5:2,6:3,7:2,8:20,9:2,10:2,11:2,12:3,13:2,14:2,15:2,16:10,17:1,18:5";

// The pools of a cluster: one per GPU product of the racked templates (rack_labels.h), members of
// that product's whole node (80%), half (10%) or a quarter (10%), e.g. 4/2/1 GPUs on GB200 trays,
// 8/4/2 on HGX H100.
std::vector<GroupPool> defaultGroupPools(std::span<const SimNodeSpec> cluster);

// One pool of every node: groups that select no GPU product (a mixed-generation cluster's jobs,
// which any model may run), GPUs per member from `memberGpus`.
GroupPool anyModelGroupPool(WeightedValues memberGpus, std::span<const SimNodeSpec> cluster);

std::vector<TimedArrival> groupWorkload(const GroupWorkloadSpec& spec, std::int64_t capacityGpus,
                                        std::uint64_t seed);

// Offered GPU-time per arrival, on average: what the arrival rate is set from.
double meanGpuTimePerArrival(const GroupWorkloadSpec& spec);

}  // namespace gte::sim
