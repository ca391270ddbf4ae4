#include "snapshot/node_state_shard.h"

#include <algorithm>
#include <bit>

namespace gte {
NodeStateShard::NodeStateShard(std::vector<Entry> entries, std::vector<PlainAnswers> plain,
                               std::vector<NodeGroupFacts> groupFacts)
    : entries_(std::move(entries)), plain_(std::move(plain)), groupFacts_(std::move(groupFacts)) {
  if (plain_.size() != entries_.size()) plain_.clear();
  if (groupFacts_.size() != entries_.size()) groupFacts_.clear();
  const std::size_t capacity = std::bit_ceil(std::max<std::size_t>(8, entries_.size() * 2));
  slots_.resize(capacity);
  mask_ = capacity - 1;
  std::size_t bytes = 0;
  for (const Entry& e : entries_)
    bytes += e.first.size();
  names_.reserve(bytes);
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const std::string& name = entries_[i].first;
    const std::uint64_t hash = nodeNameHash(name);
    std::uint64_t at = probeStart(hash) & mask_;
    while (slots_[at].nameOffset != kEmpty)
      at = (at + 1) & mask_;
    slots_[at] = Slot{hash, entries_[i].second.get(), static_cast<std::uint32_t>(names_.size()),
                      static_cast<std::uint32_t>(name.size()), static_cast<std::uint32_t>(i)};
    names_.append(name);
  }
}

std::uint32_t NodeStateShard::slotOf(std::string_view name, std::uint64_t hash) const noexcept {
  for (std::uint64_t at = probeStart(hash) & mask_;; at = (at + 1) & mask_) {
    const Slot& slot = slots_[at];
    if (slot.nameOffset == kEmpty) return kEmpty;
    if (slot.hash == hash && slot.nameLength == name.size() &&
        std::string_view(names_).substr(slot.nameOffset, name.size()) == name) {
      return static_cast<std::uint32_t>(at);
    }
  }
}

const NodeState* NodeStateShard::find(std::string_view name, std::uint64_t hash) const noexcept {
  const std::uint32_t at = slotOf(name, hash);
  return at == kEmpty ? nullptr : slots_[at].state;
}

NodeStateShard::Found NodeStateShard::findWithAnswers(std::string_view name,
                                                      std::uint64_t hash) const noexcept {
  const std::uint32_t at = slotOf(name, hash);
  if (at == kEmpty) return {};
  const std::uint32_t entry = slots_[at].entry;
  return {slots_[at].state, plain_.empty() ? nullptr : &plain_[entry],
          groupFacts_.empty() ? nullptr : &groupFacts_[entry]};
}

const NodeGroupFacts* NodeStateShard::groupFacts(std::string_view name,
                                                 std::uint64_t hash) const noexcept {
  const std::uint32_t at = slotOf(name, hash);
  return at == kEmpty || groupFacts_.empty() ? nullptr : &groupFacts_[slots_[at].entry];
}

NodeStateConstSharedPtr NodeStateShard::get(std::string_view name, std::uint64_t hash) const {
  const std::uint32_t at = slotOf(name, hash);
  return at == kEmpty ? nullptr : entries_[slots_[at].entry].second;
}

}  // namespace gte
