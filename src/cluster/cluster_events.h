#pragma once
// What the cluster cache reports as it changes, to whoever watches it (metrics, placement regret):
// one interface instead of a callback per event. Every method does nothing unless overridden.
// ClusterState calls them on the thread that made the change, each where its comment says.
#include <cstddef>
#include <string>
#include <string_view>

#include "cluster/dra_bind_check.h"
#include "cluster/group_book.h"
#include "health/placement_regret.h"

namespace gte::cluster {

class ClusterEvents {
 public:
  virtual ~ClusterEvents() = default;

  // Under the writer lock: keep these cheap (a metric observation).
  // Each snapshot build's wall time, in seconds.
  virtual void snapshotBuilt(double /*seconds*/) {}
  // Pod-group holds released, and why.
  virtual void holdsReleased(HoldRelease /*reason*/, std::size_t /*count*/) {}
  // A group's last planned member bound: for each level of its plan, whether all its members
  // share one domain of that level.
  virtual void groupPlaced(std::string_view /*level*/, bool /*whole*/) {}
  // Seconds from a group's first member bound to its last.
  virtual void groupFirstToLast(double /*seconds*/) {}
  // At the first bind of a pod with ResourceClaims: the claims' allocation against the prediction.
  virtual void draBindChecked(DraBindCheck /*check*/) {}

  // After the writer lock is released.
  // A GPU pod seen bound to a node after the cache saw it pending, nominated or reserved (the
  // pods of a first list are not new placements), with the GPUs it holds there.
  virtual void podPlaced(const PodPlacement& /*placement*/) {}
  // A pod deleted or finished.
  virtual void podGone(const std::string& /*uid*/) {}
};

}  // namespace gte::cluster
