#pragma once
// The one fit check: does this pod fit this node now, and if not, could it on the node emptied of
// pods? Filter calls it per node, bind's reservation calls it before taking GPUs (so a bind is
// refused exactly when filter would refuse the node now, with the same reason), and preempt's
// what-if calls it on the node with the victims released. A pure function of the pod's demand, the
// node's precomputed state and the policy: no I/O, clock, locks or globals; the common cases are
// table lookups.
#include "core/fit_outcome.h"
#include "core/node_state.h"
#include "core/pod_demand.h"
#include "policy/policy.h"

namespace gte {

FitOutcome checkFit(const PodDemand& demand, const NodeState& state, const Policy& policy);

}  // namespace gte
