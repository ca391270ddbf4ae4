#pragma once
// The two typed sinks that feed a ClusterState from the API server's lists and watches: Node
// objects and Pod objects, read by the model's readers (readNodeJson, readPodJson) in the same pass
// as the list page or the watch event. Pods that request no GPU or MIG device are dropped as they
// arrive, and the rest compacted, so a list of 100,000 pods never sits in memory whole.
#include <functional>
#include <memory>
#include <vector>

#include "cluster/cluster_state.h"
#include "kube/object_sink.h"

namespace gte::cluster {

class NodeCacheSink final : public kube::ObjectSink<NodeInfo> {
 public:
  // onListed runs after every completed full list (the backend flips `synced` on the first).
  NodeCacheSink(std::shared_ptr<ClusterState> state, std::function<void()> onListed);
  void beginList() override;
  Status listItem(NodeInfo node) override;
  void endList() override;
  Status apply(kube::WatchEventType type, NodeInfo node) override;

 private:
  std::shared_ptr<ClusterState> state_;
  std::function<void()> onListed_;
  std::vector<NodeInfo> listing_;
};

class PodCacheSink final : public kube::ObjectSink<PodInfo> {
 public:
  PodCacheSink(std::shared_ptr<ClusterState> state, std::function<void()> onListed);
  void beginList() override;
  Status listItem(PodInfo pod) override;
  void endList() override;
  Status apply(kube::WatchEventType type, PodInfo pod) override;

 private:
  std::shared_ptr<ClusterState> state_;
  std::function<void()> onListed_;
  std::vector<ObservedPod> listing_;
};

// A Pod as the cache keeps it: PodInfo and its bind time. An error when it has no metadata.uid.
Result<ObservedPod> observePod(PodInfo pod);
// The same for a Pod's JSON (an answer of the API server).
Result<ObservedPod> observePod(std::string_view object);

}  // namespace gte::cluster
