#pragma once
// The GPUs and MIG instances a pod would take on a node: the NVIDIA device plugin's pick for whole
// GPUs (inside the Topology Manager's NUMA node when the pod asks for one), and the MIG plan.
#include "core/allocation.h"
#include "core/node_state.h"
#include "core/pod_demand.h"
#include "core/set_quality.h"

namespace gte {

// The GPUs and MIG instances the device plugin will hand the pod on the node. On a node whose GPUs
// it shares (NodeState::sharesGpus) the pod's nvidia.com/gpu are replicas placed by tenants per
// GPU: complete where the pod fits, with no whole GPU named.
Allocation predictAllocation(const PodDemand& demand, const NodeState& state);

// The whole-GPU pick the pod gets on this node, or nullptr when none of that size exists.
const GpuPick* wholeGpuPick(const PodDemand& demand, const NodeState& state) noexcept;

// How well linked that pick is; unknown (all zero) for fewer than two GPUs or no pick.
SetQuality setQualityOf(const PodDemand& demand, const NodeState& state) noexcept;

}  // namespace gte
