#include "snapshot/node_state_index.h"

#include <array>

namespace gte {

void NodeStateIndex::findAll(std::span<const std::string> names,
                             std::span<NodeStateShard::Found> out) const noexcept {
  // A three-step pipeline over the names: the slot of name i + 2 * kAhead is requested, the name
  // and answers that name i + kAhead's slot points to are requested (its slot has arrived by
  // now), and name i is looked up from lines already loaded. A request of thousands of names
  // then overlaps their cache misses instead of paying them one after another; up to 16 are in
  // flight.
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
    out[i] = shard == nullptr ? NodeStateShard::Found{} : shard->findWithAnswers(names[i], hash);
    if (i + kAhead < n) requestEntry(i + kAhead);
    if (i + kRing < n) requestSlot(i + kRing);
  }
}

}  // namespace gte
