#pragma once
// Replays a pod sequence on a simulated cluster with the extender's own decision code, in process
// (the engine in placement_engine.h): the same checkFit and prioritizeNodes (scoreNode, then the
// wire scale over the feasible nodes) the HTTP verbs call, on NodeStates built from labels-v1
// nodes of built-in templates, with the GPUs a pod takes predicted as the NVIDIA device plugin
// picks them (predictAllocation). A MIG pod asks for one
// instance: the extender places it with the same checkFit/prioritizeNodes and its MIG plan (GPU and
// start slice), the baselines by slice counts alone (mig_slices.h), and a baseline's choice where
// the profile has no legal start is recorded as invalid and takes nothing. No departures: pods stay
// where they land. Deterministic for a seed. DRA mode (`SimOptions::draOrder`): every node's GPUs
// are one NVIDIA DRA ResourceSlice and pods get the devices the DRA allocator's first-fit picks
// (placement_engine.h, sim/dra_cluster.h).
#include <cstdint>
#include <span>
#include <vector>

#include "policy/policy.h"
#include "sim/fragmentation.h"
#include "sim/placement_engine.h"
#include "sim/sim_pod.h"

namespace gte::sim {

struct SimRun {
  std::int64_t capacityGpus = 0;         // whole GPUs (not in MIG mode)
  std::int64_t capacitySlices = 0;       // every GPU's memory slices, MIG or not
  std::int64_t capacityMigSlices = 0;    // memory slices of GPUs in MIG mode
  std::vector<PodPlacement> placements;  // one per arrival, in order
  std::vector<Fragmentation> fragmentation;
  std::vector<NodeStateConstSharedPtr> finalStates;  // every node once the last pod arrived
};

SimRun simulate(std::span<const SimNodeSpec> cluster, std::span<const SimPod> arrivals,
                const Policy& policy, const SimOptions& options);

}  // namespace gte::sim
