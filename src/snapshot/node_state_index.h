#pragma once
// The nodes of one ClusterSnapshot by name, split into a fixed number of shards by the name's
// hash. Each shard is an immutable map shared by pointer, so a build that changed one node copies
// only that node's shard (about nodes/64 entries) and takes every other shard over from the
// previous snapshot. Lookups stay one hash and one probe of a flat table (node_state_shard.h),
// without allocation.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "core/node_state.h"
#include "snapshot/node_state_shard.h"

namespace gte {

// Heterogeneous lookup so a std::string_view from the wire finds a node without a copy.
struct NodeNameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view name) const noexcept {
    return static_cast<std::size_t>(nodeNameHash(name));
  }
};

class NodeStateIndex {
 public:
  static constexpr std::size_t kShardCount = 64;
  using Shard = NodeStateShard;
  using ShardConstSharedPtr = std::shared_ptr<const Shard>;

  static std::size_t shardOf(std::string_view name) noexcept {
    return shardOfHash(nodeNameHash(name));
  }

  // nullptr when the node is not known.
  const NodeState* find(std::string_view name) const noexcept {
    const std::uint64_t hash = nodeNameHash(name);
    const Shard* shard = shards_[shardOfHash(hash)].get();
    return shard == nullptr ? nullptr : shard->find(name, hash);
  }
  // Looks up every name and calls visit(i, NodeStateShard::Found) for each, in order (state and
  // answers both null for an unknown name). A three-step pipeline over the names: the slot of name
  // i + 2 * kAhead is requested, the name and answers that name i + kAhead's slot points to are
  // requested (its slot has arrived by now), and name i is looked up from lines already loaded. A
  // request of thousands of names (every node of a large cluster) then overlaps their cache misses
  // instead of paying them one after another, and allocates nothing here.
  template <class Visit>
  void findAll(std::span<const std::string> names, Visit&& visit) const {
    constexpr std::size_t kAhead = 8;
    constexpr std::size_t kRing = 2 * kAhead;
    std::array<std::uint64_t, kRing> hashes{};
    const std::size_t n = names.size();
    const auto shardFor = [this](std::uint64_t hash) { return shards_[shardOfHash(hash)].get(); };
    const auto requestSlot = [&](std::size_t i) {
      const std::uint64_t hash = nodeNameHash(names[i]);
      hashes[i % kRing] = hash;
      if (const Shard* shard = shardFor(hash)) shard->prefetch(hash);
    };
    const auto requestEntry = [&](std::size_t i) {
      const std::uint64_t hash = hashes[i % kRing];
      if (const Shard* shard = shardFor(hash)) shard->prefetchEntry(hash);
    };
    for (std::size_t i = 0; i < kRing && i < n; ++i)
      requestSlot(i);
    for (std::size_t i = 0; i < kAhead && i < n; ++i)
      requestEntry(i);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t hash = hashes[i % kRing];
      const Shard* shard = shardFor(hash);
      visit(i, shard == nullptr ? NodeStateShard::Found{} : shard->findWithAnswers(names[i], hash));
      if (i + kAhead < n) requestEntry(i + kAhead);
      if (i + kRing < n) requestSlot(i + kRing);
    }
  }
  // The node's pod-group facts; null when the node is not known.
  const NodeGroupFacts* groupFacts(std::string_view name) const noexcept {
    const std::uint64_t hash = nodeNameHash(name);
    const Shard* shard = shards_[shardOfHash(hash)].get();
    return shard == nullptr ? nullptr : shard->groupFacts(name, hash);
  }
  // Null when the node is not known.
  NodeStateConstSharedPtr get(std::string_view name) const {
    const std::uint64_t hash = nodeNameHash(name);
    const Shard* shard = shards_[shardOfHash(hash)].get();
    return shard == nullptr ? nullptr : shard->get(name, hash);
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
  static std::size_t shardOfHash(std::uint64_t hash) noexcept {
    return static_cast<std::size_t>(hash % kShardCount);
  }

  std::array<ShardConstSharedPtr, kShardCount> shards_;
  std::size_t size_ = 0;
};

}  // namespace gte
