#include "service/resolution_memo.h"

#include <cstring>
#include <utility>

namespace gte {

bool ResolutionMemo::Entry::sameNames(std::span<const std::string> list) const noexcept {
  if (list.size() != count) return false;
  std::size_t at = 0;
  for (const std::string& name : list) {
    // The terminator is compared too: a name that is a prefix of the kept one differs.
    if (at + name.size() >= names.size() ||
        std::memcmp(name.data(), names.data() + at, name.size()) != 0 ||
        names[at + name.size()] != '\0') {
      return false;
    }
    at += name.size() + 1;
  }
  return at == names.size();
}

ResolutionMemo::EntryConstSharedPtr ResolutionMemo::find(
    const ClusterSnapshotConstSharedPtr& snapshot, std::span<const std::string> names) const {
  if (!snapshot || snapshot->nodesGeneration == 0) return nullptr;
  std::array<EntryConstSharedPtr, kEntries> candidates;
  {
    MutexLock lock(mutex_);
    for (std::size_t i = 0; i < kEntries; ++i) {
      const EntryConstSharedPtr& entry = entries_[i];
      if (entry && entry->nodesGeneration == snapshot->nodesGeneration &&
          entry->count == names.size()) {
        candidates[i] = entry;
      }
    }
  }
  for (EntryConstSharedPtr& entry : candidates) {
    if (entry && entry->sameNames(names)) return std::move(entry);
  }
  return nullptr;
}

void ResolutionMemo::keep(const ClusterSnapshotConstSharedPtr& snapshot,
                          std::span<const std::string> names,
                          std::vector<NodeStateShard::Found> found) {
  if (!snapshot || snapshot->nodesGeneration == 0) return;
  auto entry = std::make_shared<Entry>();
  std::size_t total = 0;
  for (const std::string& name : names)
    total += name.size() + 1;
  entry->names.resize(total);
  char* at = entry->names.data();
  for (const std::string& name : names) {
    std::memcpy(at, name.data(), name.size());
    at += name.size();
    *at++ = '\0';
  }
  entry->count = names.size();
  entry->found = std::move(found);
  entry->nodesGeneration = snapshot->nodesGeneration;
  // Released outside the lock (their buffers are freed there).
  std::array<EntryConstSharedPtr, kEntries + 1> released;
  {
    MutexLock lock(mutex_);
    for (std::size_t i = 0; i < kEntries; ++i) {
      if (entries_[i] && entries_[i]->nodesGeneration != entry->nodesGeneration) {
        released[i] = std::move(entries_[i]);
        entries_[i].reset();
      }
    }
    std::size_t slot = next_;
    for (std::size_t i = 0; i < kEntries; ++i) {
      if (!entries_[i]) {
        slot = i;
        break;
      }
    }
    released[kEntries] = std::move(entries_[slot]);
    entries_[slot] = std::move(entry);
    next_ = (slot + 1) % kEntries;
  }
}

}  // namespace gte
