#pragma once
// The route a pod's devices take on one node, chosen here and nowhere else: the per-node decision
// (NodeDecider: filter, prioritize, bind, preempt, explain, what-if, the simulator) and the group
// planner's slots both ask routeOn, so a pod is never decided by one route and planned by another.
// Pure.
#include <cstdint>

#include "core/pod_demand.h"

namespace gte {

struct NodeState;

enum class PodRoute : std::uint8_t {
  // A DRA demand the extender does not interpret (pod_demand.h): every node fits, no score.
  kPassedThrough,
  // Claims of "N GPUs of one class" on a DRA node whose plain order is that class
  // (claims_as_gpus.h): N whole GPUs, decided from the node state as a device-plugin pod.
  kClaimsAsGpus,
  // Any other claims: the DRA allocator's first-fit replica (dra_decision.h); nvidia.com/gpu and
  // MIG requests beside them are the device plugin's where the node's plugin serves them.
  kDraFirstFit,
  // No claims: whole GPUs and MIG instances as the device plugin (or, for DRA-backed
  // nvidia.com/gpu, the node's precomputed first-fit order) hands them out.
  kDevicePlugin,
};

PodRoute routeOn(const PodDemand& demand, const NodeState& state) noexcept;

}  // namespace gte
