#pragma once
// The service's view of the cluster in nodeCacheCapable mode: the extender's own truth about nodes
// and pods (from an API-server watch or a --cluster-file), and the verbs that change it. The
// service (pure request handling) depends on this interface only; src/cluster implements it (the
// cluster file, and in src/cluster/apiserver the API server's watches).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "group/pod_group.h"
#include "model/pod_info.h"
#include "service/group_plan_store.h"

namespace gte {

struct ClusterSnapshot;  // src/snapshot/cluster_snapshot.h

struct BindRequest {
  std::string podName;
  std::string podNamespace;
  std::string podUid;
  std::string node;
};

// What the HTTP transport knows of a bind's caller while the bind is in flight.
struct BindCaller {
  // When the whole request was in: a bind's age, for --bind-deadline, counts from here.
  std::chrono::steady_clock::time_point received = std::chrono::steady_clock::now();
  // Turns true when the caller closes its connection (kube-scheduler gave up: httpTimeout). Null
  // when nobody watches the connection.
  std::shared_ptr<const std::atomic<bool>> gone;

  bool hasGone() const noexcept { return gone && gone->load(std::memory_order_relaxed); }
};

// Why a bind was dropped before its Binding was sent (its reservation released): its caller
// closed the connection, it waited past --bind-deadline, or this replica is not the leader (a
// standby, or a leader that can no longer prove it holds its lease).
enum class BindAbandon : std::uint8_t { kNone, kCallerGone, kDeadline, kNotLeader };

struct BindOutcome {
  Status status;
  BindAbandon abandoned = BindAbandon::kNone;
  // Where a bind's time went, for its log line: the pod had to be read from the API server (the
  // watch had not delivered it), and the wait for a --bind-concurrency slot.
  bool podRead = false;
  std::chrono::milliseconds slotWait{0};
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
  // A standby replica of a leader-elected extender that a Service routed a caller to: its answers
  // close their connections, so the caller reconnects to the Service's current endpoint (the
  // leader) instead of keeping a pooled connection to this replica.
  virtual bool redirectsCallers() const { return false; }

  // Reserves the pod's predicted GPUs on `node` (atomically against concurrent reservations), then
  // creates the pods/binding. Idempotent: a pod already bound to `node` is a success. On failure
  // the reservation is released and the error says why.
  virtual Status bind(const BindRequest& request) = 0;
  // bind() without holding the caller's thread: a decision thread must never wait on the API
  // server. `done` runs once, on whichever thread finishes the bind. A backend that talks to an API
  // server drops a bind whose caller has gone or that waited past its deadline instead of sending
  // it (BindOutcome::abandoned). The default runs bind() inline, for backends that never block (a
  // cluster file).
  virtual void bindAsync(BindRequest request, BindCaller /*caller*/,
                         std::function<void(BindOutcome)> done) {
    done(BindOutcome{bind(request)});
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

  // Sizes of the objects that own pod groups (PodGroup, JobSet, Job) the backend knows; null when
  // it watches none (a group whose size is not on its pods is then placed pod by pod).
  virtual const GroupSizeLookup* groupSizes() const { return nullptr; }
  // The cache's pod-group plans (thread-safe); null: groups are placed pod by pod. A backend built
  // on a ClusterState sets its state's own, in its constructor (tests may set another).
  GroupPlanStore* groupPlans() const noexcept { return groupPlans_; }
  void setGroupPlans(GroupPlanStore* store) noexcept { groupPlans_ = store; }

 private:
  GroupPlanStore* groupPlans_ = nullptr;
};

}  // namespace gte
