#pragma once
// A pod whose DRA claims amount to "N GPUs of one class" (DraDemand::plainGpus: exact counts, no
// selectors, tolerations or constraints), read as a pod of N whole GPUs, plus its own
// `nvidia.com/gpu` (whose claim comes last, of the same class), on a DRA node whose plain order is
// that class's: there the allocator's first-fit set is the first free GPUs of the node's plain
// order, which the node state has precomputed (docs/dra.md, "Cost"). NodeDecider decides such pods
// from the node state, and the group planner counts their slots in the node's chain
// (docs/groups.md, "DRA nodes"). Pure.
#include <optional>

#include "core/pod_demand.h"
#include "dra_placement/dra_demand.h"

namespace gte {

struct NodeState;

// Whether the pod's claims are of that form (it has claims, no MIG request, and its own
// nvidia.com/gpu, if any, is backed by the claims' class).
bool claimsAreGpus(const PodDemand& demand) noexcept;

// The pod as whole GPUs (`dra` cleared), or nullopt when its claims are not of that form.
std::optional<PodDemand> claimsAsGpus(const PodDemand& demand);

// Whether `state` is a DRA node whose plain order is the class of the claims `demand` reads as
// GPUs (the same class catalog, a class it can evaluate there).
bool readsClaimsAsGpus(const DraDemand& demand, const NodeState& state) noexcept;

}  // namespace gte
