#pragma once
// The immutable view of the cluster one request decides on (design anchor 2): the policy and a
// NodeState per node. Handlers load the pointer once per request; builders publish new ones.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "policy/policy.h"
#include "snapshot/node_state.h"

namespace gte {

// Heterogeneous lookup so a std::string_view from the wire finds a node without a copy.
struct NodeNameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view name) const noexcept {
    return std::hash<std::string_view>{}(name);
  }
};

using NodeStateMap =
    std::unordered_map<std::string, NodeStateConstSharedPtr, NodeNameHash, std::equal_to<>>;

struct ClusterSnapshot {
  std::uint64_t generation = 0;  // bumps with every build that changed something
  PolicyConstSharedPtr policy;
  bool synced = false;  // the first full list of nodes and pods is in
  NodeStateMap nodes;

  // nullptr when the node is not known.
  const NodeState* find(std::string_view name) const noexcept {
    const auto it = nodes.find(name);
    return it == nodes.end() ? nullptr : it->second.get();
  }
};

using ClusterSnapshotConstSharedPtr = std::shared_ptr<const ClusterSnapshot>;

}  // namespace gte
