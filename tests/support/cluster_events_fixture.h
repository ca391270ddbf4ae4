#pragma once
// A ClusterEvents that calls, for each event, the function a test set for it (none set: ignored).
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "cluster/cluster_events.h"

namespace gte::testing {

struct FunctionEvents final : cluster::ClusterEvents {
  std::function<void(double)> onSnapshotBuilt;
  std::function<void(cluster::HoldRelease, std::size_t)> onHoldsReleased;
  std::function<void(std::string_view, bool)> onGroupPlaced;
  std::function<void(double)> onGroupFirstToLast;
  std::function<void(cluster::DraBindCheck)> onDraBindChecked;
  std::function<void(const PodPlacement&)> onPodPlaced;
  std::function<void(const std::string&)> onPodGone;

  void snapshotBuilt(double seconds) override {
    if (onSnapshotBuilt) onSnapshotBuilt(seconds);
  }
  void holdsReleased(cluster::HoldRelease reason, std::size_t count) override {
    if (onHoldsReleased) onHoldsReleased(reason, count);
  }
  void groupPlaced(std::string_view level, bool whole) override {
    if (onGroupPlaced) onGroupPlaced(level, whole);
  }
  void groupFirstToLast(double seconds) override {
    if (onGroupFirstToLast) onGroupFirstToLast(seconds);
  }
  void draBindChecked(cluster::DraBindCheck check) override {
    if (onDraBindChecked) onDraBindChecked(check);
  }
  void podPlaced(const PodPlacement& placement) override {
    if (onPodPlaced) onPodPlaced(placement);
  }
  void podGone(const std::string& uid) override {
    if (onPodGone) onPodGone(uid);
  }
};

// A fresh FunctionEvents, shared as ClusterStateOptions::events holds it.
inline std::shared_ptr<FunctionEvents> functionEvents() {
  return std::make_shared<FunctionEvents>();
}

}  // namespace gte::testing
