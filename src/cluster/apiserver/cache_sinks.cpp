#include "cluster/apiserver/cache_sinks.h"

namespace gte::cluster {
namespace {

// Pending GPU pods are kept too: bind reads the pod it binds from the cache rather than from the
// API server.
bool worthKeeping(const PodInfo& pod) {
  return !pod.terminal() && holdsDevices(pod);
}

}  // namespace

Result<ObservedPod> observePod(PodInfo pod) {
  if (pod.uid.empty()) return invalidArgument("pod " + pod.name + " without metadata.uid");
  const std::optional<std::int64_t> boundAt = pod.boundAt;
  return ObservedPod{std::move(pod), boundAt};
}

Result<ObservedPod> observePod(std::string_view object) {
  auto pod = parsePodJson(object);
  if (!pod) return std::move(pod).error();
  return observePod(std::move(*pod));
}

NodeCacheSink::NodeCacheSink(std::shared_ptr<ClusterState> state, std::function<void()> onListed)
    : state_(std::move(state)), onListed_(std::move(onListed)) {}

void NodeCacheSink::beginList() {
  listing_.clear();
}

// readNodeJson refuses a node without metadata.name.
Status NodeCacheSink::listItem(NodeInfo node) {
  listing_.push_back(std::move(node));
  return Ok{};
}

void NodeCacheSink::endList() {
  state_->replaceNodes(std::move(listing_));
  listing_ = {};
  onListed_();
}

Status NodeCacheSink::apply(kube::WatchEventType type, NodeInfo node) {
  if (type == kube::WatchEventType::kDeleted) {
    state_->removeNode(node.name);
  } else {
    state_->upsertNode(std::move(node));
  }
  return Ok{};
}

PodCacheSink::PodCacheSink(std::shared_ptr<ClusterState> state, std::function<void()> onListed)
    : state_(std::move(state)), onListed_(std::move(onListed)) {}

void PodCacheSink::beginList() {
  listing_.clear();
}

Status PodCacheSink::listItem(PodInfo pod) {
  auto observed = observePod(std::move(pod));
  if (!observed) return std::move(observed).error();
  if (worthKeeping(observed->pod)) {
    // Compacted now: a list of 100,000 pods must not be held whole until it ends.
    observed->pod = state_->compact(std::move(observed->pod));
    listing_.push_back(std::move(*observed));
  }
  return Ok{};
}

void PodCacheSink::endList() {
  state_->replacePods(std::move(listing_));
  listing_ = {};
  onListed_();
}

Status PodCacheSink::apply(kube::WatchEventType type, PodInfo pod) {
  auto observed = observePod(std::move(pod));
  if (!observed) return std::move(observed).error();
  if (type == kube::WatchEventType::kDeleted) {
    state_->removePod(observed->pod.uid);
  } else {
    state_->upsertPod(std::move(*observed));  // drops it when no longer worth keeping
  }
  return Ok{};
}

}  // namespace gte::cluster
