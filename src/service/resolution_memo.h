#pragma once
// NodeNames mode: the lookups of one request's node names in one snapshot's node shards, kept for
// the next request that sends the same names on a snapshot with the same shards. A pod's
// prioritize follows its filter with the names filter kept, and a gang's members arrive one after
// another with the same list; each would otherwise hash and probe every name again (on 5,000
// nodes, a quarter of a member's request). Between them the cache publishes snapshots that change
// no node (a member's filter pins its group slot, a member arrives waiting): those share every
// shard, so the lookups still hold. A hit is exact: the same node generation
// (ClusterSnapshot::nodesGeneration: the same shard objects, immutable, so every lookup in them
// gives the same answer) and the same names, compared byte for byte. An entry keeps no snapshot
// and no shard alive: its lookups are used only by a request that holds a snapshot of that
// generation, whose shards they point into. Keeping an entry of a newer generation drops those of
// older ones, so the memo holds at most kEntries lists of one generation. Snapshots not made by a
// builder (generation 0) are never kept or matched. Thread-safe: the lock is held only to copy or
// replace pointers; names are compared and copied outside it.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "snapshot/cluster_snapshot.h"
#include "snapshot/node_state_shard.h"

namespace gte {

class ResolutionMemo {
 public:
  // How many distinct name lists of one snapshot are kept (kube-scheduler sends the nodes that
  // passed its own filters, which differ with the pod's requests).
  static constexpr std::size_t kEntries = 4;

  struct Entry {
    std::uint64_t nodesGeneration = 0;  // of the snapshot the lookups were made in
    std::string names;                  // each name followed by '\0' (no node name holds one)
    std::size_t count = 0;
    std::vector<NodeStateShard::Found> found;  // per name, in order

    bool sameNames(std::span<const std::string> list) const noexcept;
  };
  using EntryConstSharedPtr = std::shared_ptr<const Entry>;

  // The lookups an earlier request made of exactly `names` in a snapshot of `snapshot`'s node
  // generation; null when none is kept. The lookups point into `snapshot`'s shards: valid while
  // the caller holds it.
  EntryConstSharedPtr find(const ClusterSnapshotConstSharedPtr& snapshot,
                           std::span<const std::string> names) const;
  // Keeps `found` (one per name, in order) as the lookups of `names` in `snapshot`, replacing the
  // oldest entry and every entry of another node generation.
  void keep(const ClusterSnapshotConstSharedPtr& snapshot, std::span<const std::string> names,
            std::vector<NodeStateShard::Found> found);

 private:
  mutable Mutex mutex_;
  std::array<EntryConstSharedPtr, kEntries> entries_ GTE_GUARDED_BY(mutex_);
  std::size_t next_ GTE_GUARDED_BY(mutex_) = 0;
};

}  // namespace gte
