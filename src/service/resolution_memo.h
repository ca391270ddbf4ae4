#pragma once
// NodeNames mode: the lookups of one request's node names in one snapshot, kept for the next
// request that sends the same names on the same snapshot. A pod's prioritize follows its filter
// with the names filter kept, and a gang's members arrive one after another with the same list,
// usually before anything is bound; each would otherwise hash and probe every name again (on
// 5,000 nodes, a quarter of a member's request). A hit is exact: the same snapshot object
// (immutable, so every lookup in it gives the same answer) and the same names, compared byte for
// byte. An entry does not keep its snapshot alive (a snapshot is freed by whoever drops it last,
// as without the memo, never on a request that merely replaced an entry); it matches only while
// the requester holds that very snapshot. Keeping an entry of a newer snapshot drops those of
// older ones, so the memo holds at most kEntries lists of one snapshot. Thread-safe: the lock is
// held only to copy or replace pointers; names are compared and copied outside it.
#include <array>
#include <cstddef>
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
    std::weak_ptr<const ClusterSnapshot> snapshot;
    const ClusterSnapshot* identity = nullptr;  // compared only while `snapshot` is alive
    std::string names;  // each name followed by '\0' (no node name holds one)
    std::size_t count = 0;
    std::vector<NodeStateShard::Found> found;  // per name, in order

    bool sameNames(std::span<const std::string> list) const noexcept;
  };
  using EntryConstSharedPtr = std::shared_ptr<const Entry>;

  // The lookups an earlier request made of exactly `names` in `snapshot`; null when none is kept.
  // The lookups point into `snapshot`: valid while the caller holds it.
  EntryConstSharedPtr find(const ClusterSnapshotConstSharedPtr& snapshot,
                           std::span<const std::string> names) const;
  // Keeps `found` (one per name, in order) as the lookups of `names` in `snapshot`, replacing the
  // oldest entry and every entry of another snapshot.
  void keep(const ClusterSnapshotConstSharedPtr& snapshot, std::span<const std::string> names,
            std::vector<NodeStateShard::Found> found);

 private:
  mutable Mutex mutex_;
  std::array<EntryConstSharedPtr, kEntries> entries_ GTE_GUARDED_BY(mutex_);
  std::size_t next_ GTE_GUARDED_BY(mutex_) = 0;
};

}  // namespace gte
