#pragma once
// The ClusterBackend of a real cluster: list+watch of Nodes and Pods (two Reflectors, each on its
// own thread) into a ClusterState, list+watch of the pod groups' size owners the API server serves
// (PodGroups, Jobs, JobSets: GroupOwnerWatches), bind through the API server, and a housekeeping
// thread that expires stale reservations and re-asks discovery for owners not served yet.
//
//   auto config = kube::loadKubeconfigFile(path);      // --kubeconfig
//   auto config = kube::inClusterConfig();             // --in-cluster
//   auto backend = cluster::makeApiServerBackend(*config, policy);
//   (*backend)->start();
//   policyListeners.add([b = backend->get()](auto p) { b->setPolicy(p); });
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "base/result.h"
#include "cluster/apiserver/group_owner_watches.h"
#include "cluster/apiserver/pod_binder.h"
#include "cluster/cluster_state.h"
#include "kube/api_client.h"
#include "kube/api_transport.h"
#include "kube/kube_config.h"
#include "kube/reflector.h"
#include "service/cluster_backend.h"

namespace gte::cluster {

struct ApiServerBackendOptions {
  cluster::ClusterStateOptions state;
  kube::ApiClientOptions client;
  std::size_t pageSize = 500;
  std::chrono::seconds minWatchTimeout{300};
  kube::BackoffOptions backoff;
  // healthy() is false once a watch has failed continuously this long, or heard nothing this long.
  std::chrono::milliseconds failureGrace{std::chrono::seconds(60)};
  std::chrono::milliseconds stuckAfter{std::chrono::minutes(5)};
  std::chrono::milliseconds housekeepingInterval{std::chrono::seconds(1)};
  // How often discovery is asked again about group-size owners not served yet (a JobSet CRD
  // installed after start-up), and, while some kind got no answer (the API server down or
  // answering 5xx), how soon it is asked again.
  std::chrono::milliseconds ownerDiscoveryInterval{std::chrono::minutes(1)};
  std::chrono::milliseconds ownerDiscoveryRetry{std::chrono::seconds(5)};
  PodBinderOptions bind;
  // Keep-alive connections to hold open for binds (--api-warm-connections), touched every
  // warmInterval with that many concurrent GET /version. The API client speaks HTTP/1.1, one
  // request per connection at a time, and drops connections idle for 30-60 s; without this, a burst
  // of binds after start-up or after a quiet spell opens a TLS connection per concurrent bind, on
  // cores the scheduler is saturating. 0: off.
  std::size_t warmConnections = 0;
  std::chrono::milliseconds warmInterval{std::chrono::seconds(20)};
};

// Progress of one list+watch, for metrics: completed full lists (more than one means re-lists) and
// failed list or watch attempts.
struct WatchCounts {
  std::uint64_t lists = 0;
  std::uint64_t failures = 0;
  std::uint64_t skipped = 0;  // objects that did not read, skipped (each logged)
};

class ApiServerBackend final : public ClusterBackend {
 public:
  ApiServerBackend(std::shared_ptr<kube::ApiTransport> transport, PolicyConstSharedPtr policy,
                   ApiServerBackendOptions options = {});
  ~ApiServerBackend() override;  // stop()
  ApiServerBackend(const ApiServerBackend&) = delete;
  ApiServerBackend& operator=(const ApiServerBackend&) = delete;

  // Starts the watches and housekeeping. snapshot() is valid (not synced) before.
  void start();
  // Cancels the watches and joins every thread, waiting at most `deadline` per watch thread.
  void stop(std::chrono::milliseconds deadline = std::chrono::seconds(5));

  ClusterSnapshotConstSharedPtr snapshot() const override { return state_->snapshot(); }
  // Nodes and Pods listed, discovery asked about group-size owners, and each owner watched listed.
  bool ready() const override;
  bool healthy(std::string* why) const override;
  // bindAsync, waited for: blocks on the API server, so never call it on a cpprest pool thread or
  // an HTTP handler's (tests and tools only).
  Status bind(const BindRequest& request) override;
  std::optional<PodInfo> podByUid(const std::string& uid) const override;
  // One GET to the API server: the cache keeps only GPU pods bound or being bound, trimmed to
  // what accounting needs, while explain is asked about pending pods and reads their annotations.
  // Blocks like bind(): never on a cpprest pool thread.
  Result<PodInfo> podByName(const std::string& ns, const std::string& name) const override;
  std::vector<PodInfo> podsOnNode(const std::string& node) const override;
  // The sizes of the PodGroups, indexed Jobs and JobSets the API server serves.
  const GroupSizeLookup* groupSizes() const override { return owners_->sizes(); }

  // The PodBinder's asynchronous bind; after stop() it answers at once with an error.
  void bindAsync(BindRequest request, BindCaller caller,
                 std::function<void(BindOutcome)> done) override;
  // The policy watcher's listener: re-derives every node.
  void setPolicy(PolicyConstSharedPtr policy) { state_->setPolicy(std::move(policy)); }
  const cluster::ClusterState& state() const { return *state_; }
  WatchCounts nodeWatch() const;
  WatchCounts podWatch() const;
  // A group-size owner's watch; watched is false while the API server does not serve the kind.
  OwnerWatchCounts ownerWatch(GroupOwnerKind kind) const { return owners_->counts(kind); }
  // Binds holding a --bind-concurrency slot (their Binding in flight), and binds waiting for one.
  std::size_t bindsSending() const { return binder_->inFlight(); }
  std::size_t bindsWaiting() const { return binder_->waiting(); }

 private:
  void housekeeping();
  void warmConnections();

  const ApiServerBackendOptions options_;
  std::shared_ptr<cluster::ClusterState> state_;
  std::shared_ptr<kube::ApiTransport> transport_;
  std::shared_ptr<PodBinder> binder_;
  std::unique_ptr<kube::Reflector> nodes_;
  std::unique_ptr<kube::Reflector> pods_;
  std::shared_ptr<GroupOwnerWatches> owners_;
  std::mutex housekeepingMutex_;
  std::condition_variable housekeepingWake_;
  bool stopping_ = false;  // GUARDED_BY(housekeepingMutex_)
  std::thread housekeeper_;
};

// Builds the cpprest kube::ApiClient for `config` and a backend on it (not started).
Result<std::unique_ptr<ApiServerBackend>> makeApiServerBackend(
    const kube::KubeConfig& config, PolicyConstSharedPtr policy,
    ApiServerBackendOptions options = {});

}  // namespace gte::cluster
