#pragma once
// Which preemption candidates would really help a GPU pod. kube-scheduler's dry run picks victims
// by in-tree resources only; evicting them helps this pod only if the GPUs they free (with what is
// already free) form a set that satisfies it — its link requirement, NUMA demand or MIG profile.
// Pure: each "what if these pods were gone" is nodeStateWithout (core/node_charges.h) on the one
// published state of the node, judged by the per-node decision filter makes (NodeDecider): a pod
// with ResourceClaims by the DRA allocator's first-fit over the devices the victims free.
#include <string>
#include <vector>

#include "core/fit_outcome.h"
#include "core/node_state.h"
#include "core/pod_demand.h"
#include "policy/policy.h"

namespace gte {

struct VictimInfo {
  std::string uid;
  bool holdsGpus = true;  // false: a pod without GPU requests (kept: in-tree fit may need it)
};

struct VictimPlan {
  // The fit check on the node with every victim gone. When the pod does not fit even then,
  // evicting cannot help it there: the node is dropped from the candidates, and this says why.
  FitOutcome withAllGone;
  // The victims to evict, most important first as given; empty when the node is dropped.
  std::vector<std::string> victims;

  bool helps() const noexcept { return withAllGone.fits(); }
};

// GPU victims whose eviction frees nothing the pod can use are left out; victims without GPUs
// stay. `state` is the node's published state, with the charges it was built with.
VictimPlan planVictims(const PodDemand& demand, const std::vector<VictimInfo>& victims,
                       const NodeState& state, const Policy& policy);

}  // namespace gte
