#pragma once
// Which preemption candidates would really help a GPU pod. kube-scheduler's dry run picks victims
// by in-tree resources only; evicting them helps this pod only if the GPUs they free (with what is
// already free) form a set that satisfies it — its link requirement, NUMA demand or MIG profile.
// Pure: node states for "these pods gone" come from a callback.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/pod_demand.h"
#include "policy/policy.h"

namespace gte {

struct NodeState;

struct VictimInfo {
  std::string uid;
  bool holdsGpus = true;  // false: a pod without GPU requests (kept: in-tree fit may need it)
};

using WhatIfState =
    std::function<std::shared_ptr<const NodeState>(const std::vector<std::string>& goneUids)>;

// The victims to evict on one node, most important first as given, or nullopt when evicting all
// of them still leaves no satisfying placement (the node is dropped from the candidates). GPU
// victims whose eviction frees nothing the pod can use are left out; victims without GPUs stay.
std::optional<std::vector<std::string>> planVictims(const PodDemand& demand,
                                                    const std::vector<VictimInfo>& victims,
                                                    const WhatIfState& whatIf,
                                                    const Policy& policy);

}  // namespace gte
