#pragma once
// Replays a pod sequence on a simulated cluster with the extender's own decision code, in process:
// the same checkFit and prioritizeNodes (scoreNode, then the wire scale over the feasible nodes)
// the HTTP verbs call, on NodeStates built from labels-v1 nodes, with the GPUs a pod takes
// predicted as the NVIDIA device plugin picks them (predictAllocation). A MIG pod asks for one
// instance: the extender places it with the same checkFit/prioritizeNodes and its MIG plan (GPU and
// start slice), the baselines by slice counts alone (mig_slices.h), and a baseline's choice where
// the profile has no legal start is recorded as invalid and takes nothing. No departures: pods stay
// where they land. Deterministic for a seed.
//
// DRA mode (`SimOptions::draOrder`, sim/dra_cluster.h): every node's GPUs come from one NVIDIA DRA
// ResourceSlice and `nvidia.com/gpu` is a DRA-backed extended resource, so inside the chosen node
// every chooser's pod gets the devices the first-fit replica of the scheduler's DRA allocator
// picks, and the extender decides on node states built from the slices and allocations. Whole
// GPUs only (no MIG templates or MIG pods). With `draPods` kClaimTemplate, pods of 2+ GPUs ask
// through the claim-template tiers instead: every chooser that models kube-scheduler adds its
// DRA plugin's score for the tier each node would allocate, and the extender decides the claim.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "policy/link_class.h"
#include "policy/policy.h"
#include "sim/dra_cluster.h"
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
  int extenderWeight = 12;                             // the chart's default
  std::uint64_t seed = 1;                              // tie-breaking
  std::vector<int> fragmentationAt = {50, 70, 90};     // arrived % of capacity
  DraDeviceOrder draOrder = DraDeviceOrder::kOff;      // kOff: the device plugin hands out GPUs
  DraPodForm draPods = DraPodForm::kExtendedResource;  // DRA mode: how 2+-GPU pods ask
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
  // MIG pods: where the instance went, and what the cluster offered when the pod arrived.
  int migGpu = -1;
  int migStart = -1;
  bool migInvalid = false;    // a MIG-naive chooser picked a node where the profile has no legal
                              // start: the instance cannot be created (node stays -1)
  bool migCountsFit = false;  // dynamic MIG: some node (CPU and memory fitting) had a GPU whose
                              // unpartitioned slice counts cover the profile
  bool migLegal = false;      // some node (CPU and memory fitting) had a legal free placement
  std::int64_t arrivedSlices = 0;       // GPU demand in memory slices (8 per whole GPU), MIG too
  std::int64_t allocatedMigSlices = 0;  // memory slices of placed MIG instances
};

struct SimRun {
  std::int64_t capacityGpus = 0;         // whole GPUs (not in MIG mode)
  std::int64_t capacitySlices = 0;       // every GPU's memory slices, MIG or not
  std::int64_t capacityMigSlices = 0;    // memory slices of GPUs in MIG mode
  std::vector<PodPlacement> placements;  // one per arrival, in order
  std::vector<Fragmentation> fragmentation;
};

SimRun simulate(std::span<const SimNodeSpec> cluster, std::span<const SimPod> arrivals,
                const Policy& policy, const SimOptions& options);

}  // namespace gte::sim
