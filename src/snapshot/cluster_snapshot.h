#pragma once
// The immutable view of the cluster one request decides on (readers load one pointer and
// nothing they hold ever changes): the policy and a
// NodeState per node. Handlers load the pointer once per request; builders publish new ones.
#include <cstdint>
#include <memory>
#include <string_view>

#include "core/node_state.h"
#include "policy/policy.h"
#include "snapshot/cluster_health.h"
#include "snapshot/node_state_index.h"

namespace gte {

struct ClusterSnapshot {
  std::uint64_t generation = 0;  // bumps with every build that changed something
  PolicyConstSharedPtr policy;
  bool synced = false;   // the first full list of nodes and pods is in
  NodeStateIndex nodes;  // sharded: a build shares every shard no changed node is in
  ClusterHealth health;  // the nodes' topology-health figures, overall and per pool

  // nullptr when the node is not known.
  const NodeState* find(std::string_view name) const noexcept { return nodes.find(name); }
};

using ClusterSnapshotConstSharedPtr = std::shared_ptr<const ClusterSnapshot>;

}  // namespace gte
