#pragma once
// The nodes of one ClusterSnapshot by name, split into a fixed number of shards by the name's
// hash. Each shard is an immutable map shared by pointer, so a build that changed one node copies
// only that node's shard (about nodes/64 entries) and takes every other shard over from the
// previous snapshot. Lookups stay one hash and one map probe, without allocation.
#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/node_state.h"

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

class NodeStateIndex {
 public:
  static constexpr std::size_t kShardCount = 64;
  using Shard = NodeStateMap;
  using ShardConstSharedPtr = std::shared_ptr<const Shard>;

  static std::size_t shardOf(std::string_view name) noexcept {
    return NodeNameHash{}(name) % kShardCount;
  }

  // nullptr when the node is not known.
  const NodeState* find(std::string_view name) const noexcept {
    const Shard* shard = shards_[shardOf(name)].get();
    if (shard == nullptr) return nullptr;
    const auto it = shard->find(name);
    return it == shard->end() ? nullptr : it->second.get();
  }
  // Null when the node is not known.
  NodeStateConstSharedPtr get(std::string_view name) const {
    const Shard* shard = shards_[shardOf(name)].get();
    if (shard == nullptr) return nullptr;
    const auto it = shard->find(name);
    return it == shard->end() ? nullptr : it->second;
  }
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }

  // Calls f(const std::string& name, const NodeStateConstSharedPtr& state) for every node, in no
  // particular order.
  template <class F>
  void forEach(F&& f) const {
    for (const auto& shard : shards_) {
      if (shard == nullptr) continue;
      for (const auto& [name, state] : *shard)
        f(name, state);
    }
  }

  // Null for a shard without nodes. Builders share these between snapshots.
  const ShardConstSharedPtr& shard(std::size_t index) const noexcept { return shards_[index]; }
  // `shard` must hold only names with shardOf(name) == index.
  void setShard(std::size_t index, ShardConstSharedPtr shard) noexcept {
    size_ -= shards_[index] ? shards_[index]->size() : 0;
    size_ += shard ? shard->size() : 0;
    shards_[index] = std::move(shard);
  }

 private:
  std::array<ShardConstSharedPtr, kShardCount> shards_;
  std::size_t size_ = 0;
};

}  // namespace gte
