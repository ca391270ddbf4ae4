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

namespace {

// Whether `entry` was kept on `snapshot`: the same object, alive (the caller holds it), so an
// address reused by a later snapshot never matches an entry of a freed one.
bool keptOn(const ResolutionMemo::Entry& entry, const ClusterSnapshotConstSharedPtr& snapshot) {
  return entry.identity == snapshot.get() && entry.snapshot.lock() == snapshot;
}

}  // namespace

ResolutionMemo::EntryConstSharedPtr ResolutionMemo::find(
    const ClusterSnapshotConstSharedPtr& snapshot, std::span<const std::string> names) const {
  if (!snapshot) return nullptr;
  std::array<EntryConstSharedPtr, kEntries> candidates;
  {
    MutexLock lock(mutex_);
    for (std::size_t i = 0; i < kEntries; ++i) {
      const EntryConstSharedPtr& entry = entries_[i];
      if (entry && entry->identity == snapshot.get() && entry->count == names.size()) {
        candidates[i] = entry;
      }
    }
  }
  for (EntryConstSharedPtr& entry : candidates) {
    if (entry && keptOn(*entry, snapshot) && entry->sameNames(names)) return std::move(entry);
  }
  return nullptr;
}

void ResolutionMemo::keep(const ClusterSnapshotConstSharedPtr& snapshot,
                          std::span<const std::string> names,
                          std::vector<NodeStateShard::Found> found) {
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
  entry->snapshot = snapshot;
  entry->identity = snapshot.get();
  // Released outside the lock (their buffers are freed there).
  std::array<EntryConstSharedPtr, kEntries + 1> released;
  {
    MutexLock lock(mutex_);
    for (std::size_t i = 0; i < kEntries; ++i) {
      if (entries_[i] && !keptOn(*entries_[i], snapshot)) {
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
