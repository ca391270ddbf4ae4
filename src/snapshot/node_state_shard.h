#pragma once
// One shard of a snapshot's node index: an immutable open-addressing table from node name to
// NodeState. Request threads look up every node of a request here (5,000 per request in a large
// cluster), so the table is laid out for that: one flat array of slots holding the name's full
// hash and the state, and every name of the shard in one contiguous buffer. A lookup is one hash,
// usually one slot read and one name comparison, without allocation; std::unordered_map needed a
// bucket read and two dependent pointer chases per node, which dominated the request.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/node_state.h"
#include "core/plain_answers.h"
#include "group/group_domains.h"

namespace gte {

// The hash of a node name, shared by the shard choice and the slot choice.
inline std::uint64_t nodeNameHash(std::string_view name) noexcept {
  return std::hash<std::string_view>{}(name);
}

class NodeStateShard {
 public:
  using Entry = std::pair<std::string, NodeStateConstSharedPtr>;

  // `entries` must have distinct names. `plain` is empty or holds each entry's precomputed
  // answers, in the same order; so is `groupFacts` with each entry's pod-group facts.
  explicit NodeStateShard(std::vector<Entry> entries, std::vector<PlainAnswers> plain = {},
                          std::vector<NodeGroupFacts> groupFacts = {});

  // nullptr when the node is not in this shard. `hash` is nodeNameHash(name).
  const NodeState* find(std::string_view name, std::uint64_t hash) const noexcept;
  struct Found {
    const NodeState* state = nullptr;       // null: not in this shard
    const PlainAnswers* plain = nullptr;    // null: not found, or the shard has none
    const NodeGroupFacts* group = nullptr;  // null: not found, or the shard has none
  };
  Found findWithAnswers(std::string_view name, std::uint64_t hash) const noexcept;
  // Null when the node is not in this shard or the shard has no group facts.
  const NodeGroupFacts* groupFacts(std::string_view name, std::uint64_t hash) const noexcept;
  // Null when the node is not in this shard.
  NodeStateConstSharedPtr get(std::string_view name, std::uint64_t hash) const;
  // Starts loading the slot a lookup of `hash` reads first, so that a caller looking up many
  // names can overlap their cache misses instead of paying them one after another.
  void prefetch(std::uint64_t hash) const noexcept {
    __builtin_prefetch(&slots_[probeStart(hash) & mask_]);
  }
  // The second step of a pipelined lookup, once the slot is likely loaded: starts loading the
  // name it will be compared with and the answers it will return.
  void prefetchEntry(std::uint64_t hash) const noexcept {
    const Slot& slot = slots_[probeStart(hash) & mask_];
    if (slot.hash != hash || slot.nameOffset == kEmpty) return;
    __builtin_prefetch(names_.data() + slot.nameOffset);
    if (!plain_.empty()) __builtin_prefetch(&plain_[slot.entry]);
  }
  bool contains(std::string_view name) const noexcept {
    return find(name, nodeNameHash(name)) != nullptr;
  }

  std::size_t size() const noexcept { return entries_.size(); }
  // Every (name, state), in no particular order.
  std::vector<Entry>::const_iterator begin() const noexcept { return entries_.begin(); }
  std::vector<Entry>::const_iterator end() const noexcept { return entries_.end(); }

 private:
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
  // The low bits pick the shard (NodeStateIndex::shardOf); the slot comes from the high ones, so
  // the names of one shard still spread over all its slots.
  static std::uint64_t probeStart(std::uint64_t hash) noexcept { return hash >> 17; }
  // 32 bytes, two to a cache line: a lookup reads one line of slots.
  struct alignas(32) Slot {
    std::uint64_t hash = 0;
    const NodeState* state = nullptr;
    std::uint32_t nameOffset = kEmpty;  // into names_; kEmpty marks an empty slot
    std::uint32_t nameLength = 0;
    std::uint32_t entry = kEmpty;  // index in entries_ and plain_
  };

  // The slot holding `name`, or kEmpty.
  std::uint32_t slotOf(std::string_view name, std::uint64_t hash) const noexcept;

  std::vector<Entry> entries_;
  std::string names_;        // every name, back to back
  std::vector<Slot> slots_;  // a power of two, at most half full
  // Per entry, contiguous: a request over every node reads 128 bytes per node from here.
  std::vector<PlainAnswers> plain_;
  std::vector<NodeGroupFacts> groupFacts_;  // per entry; read only when a group is planned
  std::uint64_t mask_ = 0;
};

}  // namespace gte
