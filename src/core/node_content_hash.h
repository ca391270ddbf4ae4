#pragma once
// The one rule for when a node's state must be read again from its labels, in both modes (the
// full-Node memo and the cluster cache's snapshot builder): when this hash of what a NodeState is
// read from changes (labels, GPU and MIG allocatable, unschedulable), or the policy does. Anything
// else in a Node (status, heartbeats, images) never costs a rebuild. A change of the pods charged
// to a node re-derives its state from what was already read.
#include <cstdint>

#include "model/node_info.h"

namespace gte {

std::uint64_t nodeContentHash(const NodeInfo& node);

}  // namespace gte
