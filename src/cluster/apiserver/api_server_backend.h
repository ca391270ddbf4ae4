#pragma once
// The ClusterBackend of a real cluster: list+watch of Nodes and Pods (two Reflectors, each on its
// own thread) into a ClusterState, list+watch of the pod groups' size owners the API server serves
// (PodGroups, Jobs, JobSets: GroupOwnerWatches) and, with --dra, of ResourceSlices, DeviceClasses
// and ResourceClaims (and DeviceTaintRules where served), bind through the API server, and a
// housekeeping thread that expires stale reservations and re-asks discovery for owners (and taint
// rules) not served yet. With leader election
// (options.leadership) every replica keeps its cache warm, but only the active one binds: a
// LeaderGate between the lease and the binder starts a takeover (a fresh pod list) on each new term
// and fences every Binding; in kHold the active replica also publishes itself as its Service's
// endpoint (options.endpoint).
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
#include <optional>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/result.h"
#include "cluster/apiserver/discovered_watch.h"
#include "cluster/apiserver/group_owner_watches.h"
#include "cluster/apiserver/leader_gate.h"
#include "cluster/apiserver/pod_binder.h"
#include "cluster/cluster_state.h"
#include "kube/api_client.h"
#include "kube/api_transport.h"
#include "kube/endpoint_slice.h"
#include "kube/kube_config.h"
#include "kube/lease_leadership.h"
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
  // --dra: also list+watch resource.k8s.io/v1 ResourceSlices, DeviceClasses and ResourceClaims,
  // and DeviceTaintRules where discovery lists them (docs/dra.md); the cache is synced only once
  // all these kinds are listed.
  bool watchDra = false;
  // Leader election: kHold (--leader-elect) competes for a lease of its own, kFollow
  // (--follow-lease) leads while the kube-scheduler beside it holds its lease. Unset: always binds.
  std::optional<kube::LeaseLeadershipOptions> leadership;
  // kHold: the EndpointSlice the active replica writes its address into, so its Service (one
  // without a selector) routes to the leader only; re-asserted every endpointRefresh.
  std::optional<kube::ServiceEndpoint> endpoint;
  std::chrono::milliseconds endpointRefresh{std::chrono::seconds(10)};
};

// Leader election as reported for metrics and logs.
struct LeadershipReport {
  bool elected = false;
  bool active = true;  // answers binds now (always, without leader election)
  LeaderGate::Role role = LeaderGate::Role::kActive;
  kube::LeadershipStatus lease;
  std::optional<std::chrono::milliseconds> lastTakeover;
};

// Progress of one list+watch, for metrics: completed full lists (more than one means re-lists) and
// failed list or watch attempts.
struct WatchCounts {
  std::uint64_t lists = 0;
  std::uint64_t failures = 0;
  std::uint64_t skipped = 0;  // objects that did not read or were refused (each logged)
  // Whether the API server serves the resource (true for the required ones); empty until a
  // discovered resource's discovery answered.
  std::optional<bool> served = true;
};

// The DRA watches' counts (all zero when --dra is off; taint rules' while not served).
struct DraWatchCounts {
  WatchCounts slices;
  WatchCounts classes;
  WatchCounts claims;
  WatchCounts taintRules;
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
  // Graceful shutdown's first step: stops leading at once (a held lease is released, so a standby
  // takes over at its next read); binds from now on are refused. The cache keeps serving.
  void stepDown();

  ClusterSnapshotConstSharedPtr snapshot() const override { return state_->snapshot(); }
  // Nodes and Pods listed, discovery asked about group-size owners, and each owner watched listed.
  bool ready() const override;
  bool healthy(std::string* why) const override;
  bool redirectsCallers() const override { return leader_ && leader_->redirectsCallers(); }
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
  DraWatchCounts draWatches() const;
  bool draEnabled() const noexcept { return !dra_.empty(); }
  // A group-size owner's watch; watched is false while the API server does not serve the kind.
  OwnerWatchCounts ownerWatch(GroupOwnerKind kind) const { return owners_->counts(kind); }
  // Binds holding a --bind-concurrency slot (their Binding in flight), and binds waiting for one.
  std::size_t bindsSending() const { return binder_->inFlight(); }
  std::size_t bindsWaiting() const { return binder_->waiting(); }
  LeadershipReport leadership() const;

 private:
  std::shared_ptr<LeaderGate> makeLeaderGate();
  void housekeeping();
  // Discovery of the optional watches (group-size owners, taint rules): false when it could not
  // tell for some, to be asked again soon.
  bool discoverOptional();
  void warmConnections();
  // kHold: writes this replica into its Service's EndpointSlice while it is active.
  void publishEndpoint(bool activated);

  const ApiServerBackendOptions options_;
  std::shared_ptr<cluster::ClusterState> state_;
  std::shared_ptr<kube::ApiTransport> transport_;
  std::shared_ptr<LeaderGate> leader_;  // null without leader election
  std::shared_ptr<PodBinder> binder_;
  std::unique_ptr<kube::Reflector> nodes_;
  std::unique_ptr<kube::Reflector> pods_;
  // The DRA watches, empty unless options_.watchDra: slices, classes, claims.
  std::vector<std::unique_ptr<kube::Reflector>> dra_;
  std::shared_ptr<GroupOwnerWatches> owners_;
  // --dra: DeviceTaintRules, watched where discovery lists them (Kubernetes 1.37+).
  std::shared_ptr<DiscoveredWatch> taintRules_;
  std::unique_ptr<kube::LeaseLeadership> leadership_;  // null without leader election
  Mutex housekeepingMutex_;
  std::condition_variable_any housekeepingWake_;
  bool stopping_ GTE_GUARDED_BY(housekeepingMutex_) = false;
  std::uint64_t activations_ GTE_GUARDED_BY(housekeepingMutex_) = 0;  // takeovers completed
  std::thread housekeeper_;
  // Housekeeping thread only: the endpoint needs writing (a takeover since, or a failed write).
  bool endpointStale_ = false;
  std::chrono::steady_clock::time_point lastPublish_{};
};

// Builds the cpprest kube::ApiClient for `config` and a backend on it (not started).
Result<std::unique_ptr<ApiServerBackend>> makeApiServerBackend(
    const kube::KubeConfig& config, PolicyConstSharedPtr policy,
    ApiServerBackendOptions options = {});

}  // namespace gte::cluster
