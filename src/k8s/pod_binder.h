#pragma once
// Bind for the API-server backend: reserve the pod's predicted GPUs in the ClusterState, create the
// pods/binding, then record the predicted GPUs in the pod's `<prefix>gpus` annotation.
//
// Idempotent, because kube-scheduler retries a bind whose answer it did not get (a timeout) and the
// binding may have landed: a pod found already bound to the requested node is a success; bound to
// another node is an error. A failed binding releases the reservation. A failed annotation is only
// logged: the pod is bound, and the cache accounts it by prediction instead.
#include <memory>

#include "base/result.h"
#include "cluster/cluster_state.h"
#include "k8s/api_transport.h"
#include "service/cluster_backend.h"

namespace gte::k8s {

class PodBinder {
 public:
  PodBinder(std::shared_ptr<ApiTransport> transport, std::shared_ptr<cluster::ClusterState> state);

  // Blocks on up to four API calls: run it on a thread of its own, never a cpprest pool thread.
  Status bind(const BindRequest& request);

 private:
  Result<cluster::ObservedPod> fetchPod(const BindRequest& request);
  Status createBinding(const BindRequest& request, const std::string& uid);
  void annotate(const BindRequest& request, const Allocation& allocation);

  std::shared_ptr<ApiTransport> transport_;
  std::shared_ptr<cluster::ClusterState> state_;
};

// The v1 Binding body (exposed for tests).
std::string bindingBody(const BindRequest& request, const std::string& uid);
// The JSON merge patch that sets one annotation (exposed for tests).
std::string annotationPatch(const std::string& key, const std::string& value);

}  // namespace gte::k8s
