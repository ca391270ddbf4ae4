#pragma once
// The sinks that feed a ClusterState's DRA part (docs/dra.md) from the resource.k8s.io/v1 list and
// watch of ResourceSlices, DeviceClasses, ResourceClaims and DeviceTaintRules, each object read by
// its DRA reader in the same pass as the list page or watch event. An object that does not read is
// skipped by the Reflector (logged, and counted in Reflector::skipped), never applied half-read.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster_state.h"
#include "dra/device_class.h"
#include "dra/device_taint_rule.h"
#include "dra/resource_claim.h"
#include "dra/resource_slice.h"
#include "kube/object_sink.h"

namespace gte::cluster {

// One watched DRA object with the resourceVersion a watch resumes from.
template <typename Object>
struct WatchedDraObject {
  std::shared_ptr<const Object> object;
  std::string resourceVersion;
};

using WatchedSlice = WatchedDraObject<dra::ResourceSlice>;
using WatchedClass = WatchedDraObject<dra::DeviceClass>;
using WatchedClaim = WatchedDraObject<dra::ResourceClaim>;
using WatchedTaintRule = WatchedDraObject<dra::DeviceTaintRule>;

Result<WatchedSlice> readWatchedSlice(json::JsonReader& reader);
Result<WatchedClass> readWatchedClass(json::JsonReader& reader);
Result<WatchedClaim> readWatchedClaim(json::JsonReader& reader);
Result<WatchedTaintRule> readWatchedTaintRule(json::JsonReader& reader);

// One sink for the four kinds: a full list replaces what the state holds of the kind, ADDED and
// MODIFIED upsert, DELETED removes.
template <typename Object>
class DraObjectSink final : public kube::ObjectSink<WatchedDraObject<Object>> {
 public:
  using Ptr = std::shared_ptr<const Object>;
  struct Calls {
    void (ClusterState::*replace)(std::vector<Ptr>);
    void (ClusterState::*upsert)(Ptr);
    std::function<void(ClusterState&, const Object&)> remove;
  };

  // onListed runs after every completed full list.
  DraObjectSink(std::shared_ptr<ClusterState> state, Calls calls, std::function<void()> onListed)
      : state_(std::move(state)), calls_(std::move(calls)), onListed_(std::move(onListed)) {}

  void beginList() override { listing_.clear(); }
  Status listItem(WatchedDraObject<Object> item) override {
    listing_.push_back(std::move(item.object));
    return Ok{};
  }
  void endList() override {
    ((*state_).*calls_.replace)(std::move(listing_));
    listing_ = {};
    onListed_();
  }
  Status apply(kube::WatchEventType type, WatchedDraObject<Object> item) override {
    if (type == kube::WatchEventType::kDeleted) {
      calls_.remove(*state_, *item.object);
    } else {
      ((*state_).*calls_.upsert)(std::move(item.object));
    }
    return Ok{};
  }

 private:
  std::shared_ptr<ClusterState> state_;
  Calls calls_;
  std::function<void()> onListed_;
  std::vector<Ptr> listing_;
};

std::shared_ptr<kube::ObjectSink<WatchedSlice>> makeSliceSink(std::shared_ptr<ClusterState> state,
                                                              std::function<void()> onListed);
std::shared_ptr<kube::ObjectSink<WatchedClass>> makeClassSink(std::shared_ptr<ClusterState> state,
                                                              std::function<void()> onListed);
std::shared_ptr<kube::ObjectSink<WatchedClaim>> makeClaimSink(std::shared_ptr<ClusterState> state,
                                                              std::function<void()> onListed);
std::shared_ptr<kube::ObjectSink<WatchedTaintRule>> makeTaintRuleSink(
    std::shared_ptr<ClusterState> state, std::function<void()> onListed);

}  // namespace gte::cluster
