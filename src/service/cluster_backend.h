#pragma once
// The service's view of the cluster in nodeCacheCapable mode: the extender's own truth about nodes
// and pods (from an API-server watch or a --cluster-file), and the verbs that change it. The
// service (pure request handling) depends on this interface only; src/cluster and src/k8s implement
// it.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "model/pod_info.h"

namespace gte {

struct ClusterSnapshot;  // src/snapshot/cluster_snapshot.h
struct NodeState;        // src/core/node_state.h

struct BindRequest {
  std::string podName;
  std::string podNamespace;
  std::string podUid;
  std::string node;
};

class ClusterBackend {
 public:
  virtual ~ClusterBackend() = default;

  // The newest immutable snapshot; never null once constructed. Until the first full list of Nodes
  // and Pods is in, its `synced` flag is false and filter answers "cache not synced".
  virtual std::shared_ptr<const ClusterSnapshot> snapshot() const = 0;
  // For /readyz: first full list done.
  virtual bool ready() const = 0;
  // For /healthz: false when a watch is stuck (no event or bookmark for too long) or the
  // API server has been unreachable past the grace period. `why` says which.
  virtual bool healthy(std::string* why) const = 0;

  // Reserves the pod's predicted GPUs on `node` (atomically against concurrent reservations), then
  // creates the pods/binding. Idempotent: a pod already bound to `node` is a success. On failure
  // the reservation is released and the error says why.
  virtual Status bind(const BindRequest& request) = 0;
  // bind() without holding the caller's thread: HTTP handlers run on cpprest's small shared pool,
  // which the API client's own I/O needs too, so a handler must never wait on the API server.
  // `done` runs on whichever thread finishes the bind. The default runs bind() inline, for
  // backends that never block (a cluster file).
  virtual void bindAsync(BindRequest request, std::function<void(Status)> done) {
    done(bind(request));
  }

  // The cached pod with this UID, for preempt's victim lookup (NodeNameToMetaVictims carry UIDs
  // only). The cache keeps only pods that request GPU or MIG devices: nullopt means the pod holds
  // none (or is unknown).
  virtual std::optional<PodInfo> podByUid(const std::string& uid) const = 0;
  // The pod as the cluster has it now, with its annotations and requests, for explain by name.
  // Errors: kNotFound (no such pod), kUnavailable (the API server could not be asked).
  virtual Result<PodInfo> podByName(const std::string& ns, const std::string& name) const = 0;
  // GPU pods the extender accounts on `node` (bound or reserved).
  virtual std::vector<PodInfo> podsOnNode(const std::string& node) const = 0;
  // What-if for preempt: the node's state as if the pods with these UIDs were gone (their
  // accounted GPUs and MIG instances free again), from the published snapshot without the cache's
  // writer lock. Null for an unknown node.
  virtual std::shared_ptr<const NodeState> nodeStateWithout(
      const std::string& node, const std::vector<std::string>& podUids) const = 0;
};

}  // namespace gte
