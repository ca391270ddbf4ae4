#pragma once
// Topology-aware filtering of one node: a pure function of the pod's demand, the node's
// precomputed state and the policy. No I/O, clock, locks or globals; the
// common cases are table lookups.
#include "filter/filter_outcome.h"
#include "policy/policy.h"
#include "snapshot/node_state.h"
#include "snapshot/pod_demand.h"

namespace gte {

FilterOutcome filterNode(const PodDemand& demand, const NodeState& state, const Policy& policy);

}  // namespace gte
