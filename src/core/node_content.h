#pragma once
// The one rule for when a node's state must be read again from its labels, in both modes (the
// full-Node memo and the cluster cache's snapshot builder): when what a NodeState is read from
// changes (its labels, GPU and MIG allocatable), or the policy does. Anything else in a Node
// (status, heartbeats, spec.unschedulable, images) never costs a rebuild. A change of the pods
// charged to a node re-derives its state from what was already read.
//
// The content is compared, not hashed: a hash match would have to be confirmed by this comparison
// anyway (a collision must never reuse the state read from other labels), and the comparison alone
// costs less than hashing every byte (it stops at the first difference, and on a match it is
// about half the work of the hash).
#include "model/node_info.h"
#include "policy/policy.h"

namespace gte {

// Equal labels and equal GPU and MIG allocatable (quantities by value: "8" equals "8000m").
bool sameNodeContent(const NodeInfo& a, const NodeInfo& b);

// The policy a node's state was read under. Both memos keep one per node next to the node content
// the state was read from, and read the labels again unless that content is the same
// (sameNodeContent) and `current` holds.
struct NodeReadKey {
  PolicyConstSharedPtr policy;  // held: its address cannot be reused by another policy meanwhile

  // The same policy object or an equal value (a policy file reloaded unchanged rebuilds nothing).
  // A key without a policy was never read.
  bool current(const PolicyConstSharedPtr& now) const noexcept {
    return policy && now && (policy == now || *policy == *now);
  }
};

}  // namespace gte
