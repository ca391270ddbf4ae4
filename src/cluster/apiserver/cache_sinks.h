#pragma once
// The two ReflectorSinks that feed a ClusterState: Node objects and Pod objects, decoded with the
// model's readers. Pods that request no GPU or MIG device are dropped as they are decoded, and the
// rest compacted, so a list of 100,000 pods never sits in memory whole.
#include <functional>
#include <memory>
#include <vector>

#include "cluster/cluster_state.h"
#include "kube/reflector_sink.h"

namespace gte::cluster {

class NodeCacheSink final : public kube::ReflectorSink {
 public:
  // onListed runs after every completed full list (the backend flips `synced` on the first).
  NodeCacheSink(std::shared_ptr<cluster::ClusterState> state, std::function<void()> onListed);
  void beginList() override;
  Status listItem(std::string_view object) override;
  void endList() override;
  Status apply(kube::WatchEventType type, std::string_view object) override;

 private:
  std::shared_ptr<cluster::ClusterState> state_;
  std::function<void()> onListed_;
  std::vector<NodeInfo> listing_;
};

class PodCacheSink final : public kube::ReflectorSink {
 public:
  PodCacheSink(std::shared_ptr<cluster::ClusterState> state, std::function<void()> onListed);
  void beginList() override;
  Status listItem(std::string_view object) override;
  void endList() override;
  Status apply(kube::WatchEventType type, std::string_view object) override;

 private:
  std::shared_ptr<cluster::ClusterState> state_;
  std::function<void()> onListed_;
  std::vector<cluster::ObservedPod> listing_;
};

// Decodes a Pod as the cache keeps it: PodInfo plus its bind time.
Result<cluster::ObservedPod> observePod(std::string_view object);

}  // namespace gte::cluster
