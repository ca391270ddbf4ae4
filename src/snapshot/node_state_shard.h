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

namespace gte {

// The hash of a node name, shared by the shard choice and the slot choice.
inline std::uint64_t nodeNameHash(std::string_view name) noexcept {
  return std::hash<std::string_view>{}(name);
}

class NodeStateShard {
 public:
  using Entry = std::pair<std::string, NodeStateConstSharedPtr>;

  // `entries` must have distinct names.
  explicit NodeStateShard(std::vector<Entry> entries);

  // nullptr when the node is not in this shard. `hash` is nodeNameHash(name).
  const NodeState* find(std::string_view name, std::uint64_t hash) const noexcept;
  // Null when the node is not in this shard.
  NodeStateConstSharedPtr get(std::string_view name, std::uint64_t hash) const;
  bool contains(std::string_view name) const noexcept {
    return find(name, nodeNameHash(name)) != nullptr;
  }

  std::size_t size() const noexcept { return entries_.size(); }
  // Every (name, state), in no particular order.
  std::vector<Entry>::const_iterator begin() const noexcept { return entries_.begin(); }
  std::vector<Entry>::const_iterator end() const noexcept { return entries_.end(); }

 private:
  static constexpr std::uint32_t kEmpty = ~std::uint32_t{0};
  struct Slot {
    std::uint64_t hash = 0;
    const NodeState* state = nullptr;
    std::uint32_t nameOffset = kEmpty;  // into names_; kEmpty marks an empty slot
    std::uint32_t nameLength = 0;
  };

  // The slot holding `name`, or kEmpty.
  std::uint32_t slotOf(std::string_view name, std::uint64_t hash) const noexcept;

  std::vector<Entry> entries_;
  std::string names_;                 // every name, back to back
  std::vector<Slot> slots_;           // a power of two, at most half full
  std::vector<std::uint32_t> entry_;  // per slot: its index in entries_ (for get)
  std::uint64_t mask_ = 0;
};

}  // namespace gte
