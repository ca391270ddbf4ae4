#pragma once
// The one rule for when a node's state must be read again from its labels, in both modes (the
// full-Node memo and the cluster cache's snapshot builder): when what a NodeState is read from
// changes (its labels, GPU and MIG allocatable), or the policy does. Anything else in a Node
// (status, heartbeats, spec.unschedulable, images) never costs a rebuild. A change of the pods
// charged to a node re-derives its state from what was already read.
//
// The hash is the fast test for "changed"; a 64-bit hash alone never decides "unchanged": on a
// hash match the content is compared too (sameNodeContent), so a collision can never reuse the
// state read from another content.
#include <cstdint>

#include "model/node_info.h"
#include "policy/policy.h"

namespace gte {

std::uint64_t nodeContentHash(const NodeInfo& node);

// Equal labels and equal GPU and MIG allocatable: the inputs nodeContentHash covers, compared.
bool sameNodeContent(const NodeInfo& a, const NodeInfo& b);

// What a node's state was read under. Both memos keep one per node with the content it was read
// from (confirmed by sameNodeContent on a hash match) and read the labels again only when
// `current` says the key has changed.
struct NodeReadKey {
  std::uint64_t contentHash = 0;
  PolicyConstSharedPtr policy;  // held: its address cannot be reused by another policy meanwhile

  // The same content hash under an equal policy: the same object, or an equal value (a policy
  // file reloaded unchanged rebuilds nothing). A key without a policy was never read.
  bool current(std::uint64_t hash, const PolicyConstSharedPtr& now) const noexcept {
    return policy && now && hash == contentHash && (policy == now || *policy == *now);
  }
};

}  // namespace gte
