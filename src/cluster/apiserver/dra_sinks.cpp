#include "cluster/apiserver/dra_sinks.h"

#include "dra/resource_slice_json.h"

namespace gte::cluster {
namespace {

template <typename Object>
Result<WatchedDraObject<Object>> watched(Result<std::shared_ptr<const Object>> read) {
  if (!read) return std::move(read).error();
  std::string version = (*read)->resourceVersion;
  return WatchedDraObject<Object>{std::move(*read), std::move(version)};
}

}  // namespace

Result<WatchedSlice> readWatchedSlice(json::JsonReader& reader) {
  return watched(dra::readResourceSlice(reader));
}

Result<WatchedClass> readWatchedClass(json::JsonReader& reader) {
  return watched(dra::readDeviceClass(reader));
}

Result<WatchedClaim> readWatchedClaim(json::JsonReader& reader) {
  return watched(dra::readResourceClaim(reader));
}

Result<WatchedTaintRule> readWatchedTaintRule(json::JsonReader& reader) {
  return watched(dra::readDeviceTaintRule(reader));
}

std::shared_ptr<kube::ObjectSink<WatchedSlice>> makeSliceSink(std::shared_ptr<ClusterState> state,
                                                              std::function<void()> onListed) {
  using Sink = DraObjectSink<dra::ResourceSlice>;
  return std::make_shared<Sink>(
      std::move(state),
      Sink::Calls{
          &ClusterState::replaceResourceSlices, &ClusterState::upsertResourceSlice,
          [](ClusterState& s, const dra::ResourceSlice& o) { s.removeResourceSlice(o.name); }},
      std::move(onListed));
}

std::shared_ptr<kube::ObjectSink<WatchedClass>> makeClassSink(std::shared_ptr<ClusterState> state,
                                                              std::function<void()> onListed) {
  using Sink = DraObjectSink<dra::DeviceClass>;
  return std::make_shared<Sink>(
      std::move(state),
      Sink::Calls{&ClusterState::replaceDeviceClasses, &ClusterState::upsertDeviceClass,
                  [](ClusterState& s, const dra::DeviceClass& o) { s.removeDeviceClass(o.name); }},
      std::move(onListed));
}

std::shared_ptr<kube::ObjectSink<WatchedClaim>> makeClaimSink(std::shared_ptr<ClusterState> state,
                                                              std::function<void()> onListed) {
  using Sink = DraObjectSink<dra::ResourceClaim>;
  return std::make_shared<Sink>(
      std::move(state),
      Sink::Calls{&ClusterState::replaceResourceClaims, &ClusterState::upsertResourceClaim,
                  [](ClusterState& s, const dra::ResourceClaim& o) {
                    s.removeResourceClaim(o.ns, o.name);
                  }},
      std::move(onListed));
}

std::shared_ptr<kube::ObjectSink<WatchedTaintRule>> makeTaintRuleSink(
    std::shared_ptr<ClusterState> state, std::function<void()> onListed) {
  using Sink = DraObjectSink<dra::DeviceTaintRule>;
  return std::make_shared<Sink>(
      std::move(state),
      Sink::Calls{
          &ClusterState::replaceDeviceTaintRules, &ClusterState::upsertDeviceTaintRule,
          [](ClusterState& s, const dra::DeviceTaintRule& o) { s.removeDeviceTaintRule(o.name); }},
      std::move(onListed));
}

}  // namespace gte::cluster
