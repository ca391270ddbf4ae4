#pragma once
// The one fit check: does this pod fit this node now, and if not, could it on the node emptied of
// pods? Filter calls it per node, bind's reservation calls it before taking GPUs (so a bind is
// refused exactly when filter would refuse the node now, with the same reason), and preempt's
// what-if calls it on the node with the victims released. A pure function of the pod's demand, the
// node's precomputed state and the policy: no I/O, clock, locks or globals; the common cases are
// table lookups.
#include <optional>

#include "core/fit_outcome.h"
#include "core/node_state.h"
#include "core/pod_demand.h"
#include "policy/policy.h"

namespace gte {

FitOutcome checkFit(const PodDemand& demand, const NodeState& state, const Policy& policy);

// The refusal of a pod's `<prefix>replicas-on` (docs/sharing.md), or nullopt. On a node whose GPUs
// are whole, `distinct` always holds and `same` only for one GPU. On a shared node the device
// plugin takes replicas one by one from the GPU with the fewest tenants, ties broken in no order
// the extender can know: `distinct` holds only when at least k GPUs share the lowest tenant count
// (else a tie may put two replicas on one GPU) and those GPUs are NVLink-connected pairwise;
// `same` only when one GPU alone has free replicas, k of them (replicas per GPU known).
std::optional<FitOutcome> replicasOnRefusal(const PodDemand& demand, const NodeState& state);

// A pod that asks for exclusive GPUs and MIG devices of a profile the device plugin shares
// (NodeState::sharedMig): refused, unresolvable, naming the profile and how it is shared; nullopt
// otherwise. Out of line and asked only for pods with MIG requests (anySharingRefusal), so the
// whole-GPU loops that inline sharingRefusal stay as small as they were.
std::optional<FitOutcome> migSharingRefusal(const PodDemand& demand,
                                            const NodeState& state) noexcept;

// The refusal of a pod's whole GPUs on a node whose device plugin shares its GPUs among pods
// (core/gpu_sharing.h, docs/sharing.md), or nullopt:
//   - a pod that asks for exclusive GPUs (`isolation: exclusive`) is refused (its MIG devices of
//     a profile the plugin shares: migSharingRefusal, asked beside it);
//   - a pod that requires a link class between its GPUs (`min-link`, two or more GPUs) or one NUMA
//     node is refused: the plugin hands out replicas by how many tenants each GPU has, not by
//     links or NUMA, and two of them may be one GPU, so no set can be promised;
//   - a pod with a container of more than one replica is refused where the plugin admits one
//     replica per container (GpuSharing::oneReplicaPerContainer: MPS, or time-slicing with
//     failRequestsGreaterThanOne): its Allocate fails such a container at admission.
// checkFit starts with it; the per-node decision asks it before reading a precomputed answer
// (which is every isolation's; plain demands carry no link or NUMA demand), so the two paths
// agree. Unresolvable: emptying the node shares its GPUs still.
inline std::optional<FitOutcome> sharingRefusal(const PodDemand& demand,
                                                const NodeState& state) noexcept {
  if (demand.gpus <= 0 || !state.sharesGpus) return std::nullopt;
  FitOutcome out;
  out.verdict = Verdict::kUnresolvable;
  out.sharing = state.sharing.strategy;
  out.replicas = state.sharing.replicas;
  if (demand.isolation == Isolation::kExclusive) {
    out.reason = FitReason::kGpusShared;
    return out;
  }
  if (state.sharing.oneReplicaPerContainer() && demand.containerGpus() > 1) {
    out.reason = FitReason::kOneReplicaPerContainer;
    return out;
  }
  if ((demand.minLink && demand.gpus > 1) || demand.singleNuma) {
    out.reason = FitReason::kGpusSharedSetUnknown;
    return out;
  }
  return std::nullopt;
}

// Both refusals: whole GPUs shared, then MIG profiles shared. Every door that asks one asks this
// (checkFit asks the two in this order).
inline std::optional<FitOutcome> anySharingRefusal(const PodDemand& demand,
                                                   const NodeState& state) noexcept {
  if (auto refused = sharingRefusal(demand, state)) return refused;
  if (!demand.mig.empty()) return migSharingRefusal(demand, state);
  return std::nullopt;
}

}  // namespace gte
