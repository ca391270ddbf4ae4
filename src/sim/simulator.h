#pragma once
// Replays a pod sequence on a simulated cluster with the extender's own decision code, in process:
// the same checkFit and prioritizeNodes (scoreNode, then the wire scale over the feasible nodes)
// the HTTP verbs call, on NodeStates built from labels-v1 nodes, with the GPUs a pod takes
// predicted as the NVIDIA device plugin picks them (predictAllocation). No departures: pods stay
// where they land. Deterministic for a seed.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "policy/link_class.h"
#include "policy/policy.h"
#include "sim/fragmentation.h"
#include "sim/node_chooser.h"
#include "sim/sim_pod.h"
#include "topology/gpu_topology.h"

namespace gte::sim {

struct SimOptions {
  Chooser chooser = Chooser::kExtender;
  InTree inTree = InTree::kLeastAllocated;  // next to the extender only
  // Pods without GPUs under the extender choosers: scored by `inTree` (nullopt), or by this
  // strategy when the default scheduler places them (the chart's scheduler serves opted-in pods).
  std::optional<InTree> cpuPodsInTree;
  int extenderWeight = 12;                          // the chart's default
  std::uint64_t seed = 1;                           // tie-breaking
  std::vector<int> fragmentationAt = {50, 70, 90};  // arrived % of capacity
};

struct PodPlacement {
  int node = -1;  // index into the cluster; -1 when no node was feasible
  GpuMask gpus = 0;
  LinkClass weakest = LinkClass::kUnknown;  // 2+ GPUs: weakest pair of the set it got
  LinkClass bestOffered =
      LinkClass::kUnknown;  // 2+ GPUs: best weakest pair a feasible node offered
  int feasibleNodes = 0;
  std::int64_t arrivedGpus = 0;    // GPU demand arrived so far, this pod included
  std::int64_t allocatedGpus = 0;  // GPUs allocated once this pod is placed
};

struct SimRun {
  std::int64_t capacityGpus = 0;
  std::vector<PodPlacement> placements;  // one per arrival, in order
  std::vector<Fragmentation> fragmentation;
};

SimRun simulate(std::span<const SimNodeSpec> cluster, std::span<const SimPod> arrivals,
                const Policy& policy, const SimOptions& options);

}  // namespace gte::sim
