#include "app/cluster_wiring.h"

#include <unistd.h>

#include <cstdlib>

#include "cluster/apiserver/api_server_backend.h"
#include "cluster/static_cluster_backend.h"
#include "kube/in_cluster_config.h"
#include "kube/kubeconfig_file.h"
#include "log/logger.h"
#include "metrics/metrics.h"
#include "service/cluster_backend.h"
#include "service/placement_recorder.h"

namespace gte::app {

void PolicyListeners::add(Listener listener) {
  std::lock_guard lock(mutex_);
  listeners_.push_back(std::move(listener));
}

void PolicyListeners::notify(const PolicyConstSharedPtr& policy) const {
  std::lock_guard lock(mutex_);
  for (const auto& l : listeners_)
    l(policy);
}

namespace {

// The pending pods by whole GPUs, in the gauge's buckets: 1, 2, 4, 8, other.
metrics::PendingGpuPods pendingBuckets(const cluster::PendingByGpus& byGpus) {
  metrics::PendingGpuPods out{};
  for (std::size_t k = 0; k < byGpus.size(); ++k) {
    const std::size_t bucket = k == 1 ? 0 : k == 2 ? 1 : k == 4 ? 2 : k == 8 ? 3 : 4;
    out[bucket] += byGpus[k];
  }
  return out;
}

template <typename Backend>
CacheCounts sizesOf(const Backend& backend) {
  const auto& state = backend.state();
  CacheCounts counts;
  counts.nodes = static_cast<std::int64_t>(state.nodeCount());
  counts.pods = static_cast<std::int64_t>(state.podCount() + state.pendingCount());
  counts.reservations = static_cast<std::int64_t>(state.reservationCount());
  counts.pendingGpuPods = pendingBuckets(state.pendingByGpus());
  return counts;
}

// A cluster file has no housekeeping thread of its own: the observer's periodic sample also
// releases pod-group holds past their TTL.
std::function<CacheCounts()> countsOf(cluster::StaticClusterBackend* backend) {
  return [backend] {
    backend->expireHolds();
    return sizesOf(*backend);
  };
}

std::function<CacheCounts()> countsOf(const cluster::ApiServerBackend* backend) {
  return [backend] {
    CacheCounts counts = sizesOf(*backend);
    counts.watched = true;
    const cluster::WatchCounts nodes = backend->nodeWatch();
    const cluster::WatchCounts pods = backend->podWatch();
    const auto totals = [](const auto& w) {
      return WatchTotals{w.lists, w.failures, w.skipped, w.served};
    };
    counts.watches[0] = totals(nodes);
    counts.watches[1] = totals(pods);
    if (backend->draEnabled()) {
      const cluster::DraWatchCounts dra = backend->draWatches();
      counts.dra = true;
      counts.watches[2] = totals(dra.slices);
      counts.watches[3] = totals(dra.classes);
      counts.watches[4] = totals(dra.claims);
      const cluster::DraCounts held = backend->state().draCounts();
      counts.slices = static_cast<std::int64_t>(held.slices);
      counts.classes = static_cast<std::int64_t>(held.classes);
      counts.claims = static_cast<std::int64_t>(held.claims);
      counts.taintRules = static_cast<std::int64_t>(held.taintRules);
      counts.watches[8] = totals(dra.taintRules);
    }
    std::size_t i = 5;
    for (const GroupOwnerKind kind :
         {GroupOwnerKind::kPodGroup, GroupOwnerKind::kJob, GroupOwnerKind::kJobSet}) {
      const cluster::OwnerWatchCounts owner = backend->ownerWatch(kind);
      counts.watches[i++] = totals(owner);
    }
    counts.bindsSending = static_cast<std::int64_t>(backend->bindsSending());
    counts.bindsWaiting = static_cast<std::int64_t>(backend->bindsWaiting());
    const cluster::LeadershipReport report = backend->leadership();
    counts.leadership.elected = report.elected;
    counts.leadership.leader = report.active;
    counts.leadership.startedLeading = report.lease.startedLeading;
    if (report.lease.lastChange) {
      counts.leadership.renewAgeSeconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - *report.lease.lastChange)
              .count();
    }
    if (report.lastTakeover) {
      counts.leadership.lastTakeoverSeconds =
          std::chrono::duration<double>(*report.lastTakeover).count();
    }
    return counts;
  };
}

// `groups` receives the state's pod-group plans when the state is built (the backend hands them to
// the service).

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::string(value) : std::string();
}

// Whose holding of the lease is ours: the flag, else the host name, which in a pod is the pod's
// name and which kube-scheduler puts before the "_" of its own identity (so a sidecar following
// its lease needs no flag: both containers of a pod share the host name).
std::string leaderIdentity(const ServeOptions& options) {
  if (!options.leaderIdentity.empty()) return options.leaderIdentity;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) return host;
  return {};
}

Status addLeaderElection(const ServeOptions& options, cluster::ApiServerBackendOptions& out) {
  if (options.leaderElection == LeaderElection::kNone) return Ok{};
  kube::LeaseLeadershipOptions lease;
  lease.role = options.leaderElection == LeaderElection::kHold ? kube::LeaseRole::kHold
                                                               : kube::LeaseRole::kFollow;
  lease.ns = options.leaseNamespace;
  lease.name = options.leaseName;
  lease.identity = leaderIdentity(options);
  if (lease.identity.empty()) {
    return invalidArgument("leader election: no host name; set --leader-elect-identity");
  }
  lease.leaseDuration = options.leaseDuration;
  lease.renewDeadline = options.renewDeadline;
  lease.retryPeriod = options.retryPeriod;
  out.leadership = std::move(lease);
  if (options.endpointService.empty()) return Ok{};
  kube::ServiceEndpoint endpoint;
  endpoint.ns = options.endpointNamespace;
  endpoint.service = options.endpointService;
  endpoint.slice = options.endpointService + "-leader";
  endpoint.address =
      options.advertiseAddress.empty() ? environment("POD_IP") : options.advertiseAddress;
  if (endpoint.address.empty()) {
    return invalidArgument("--publish-endpoint needs --advertise-address or POD_IP");
  }
  endpoint.pod = environment("POD_NAME");
  if (endpoint.pod.empty()) endpoint.pod = out.leadership->identity;
  endpoint.nodeName = environment("NODE_NAME");
  endpoint.ports.push_back(kube::EndpointPort{"http", options.port});
  if (options.metricsPort != 0) {
    endpoint.ports.push_back(kube::EndpointPort{"metrics", options.metricsPort});
  }
  out.endpoint = std::move(endpoint);
  return Ok{};
}

// The cache's events to the metrics and to placement regret (either may be absent).
class ServeEvents final : public cluster::ClusterEvents {
 public:
  ServeEvents(metrics::Metrics* metrics, PlacementRecorder* placements)
      : metrics_(metrics), placements_(placements) {}

  void snapshotBuilt(double seconds) override {
    if (metrics_ != nullptr) metrics_->observeSnapshotBuild(seconds);
  }
  void holdsReleased(cluster::HoldRelease reason, std::size_t n) override {
    if (metrics_ != nullptr) metrics_->countHoldsReleased(cluster::holdReleaseName(reason), n);
  }
  void groupPlaced(std::string_view level, bool whole) override {
    if (metrics_ != nullptr) metrics_->countGroupPlaced(level, whole);
  }
  void groupFirstToLast(double seconds) override {
    if (metrics_ != nullptr) metrics_->observeGroupFirstToLast(seconds);
  }
  void draBindChecked(cluster::DraBindCheck check) override {
    if (metrics_ != nullptr) metrics_->countDraBindPrediction(cluster::draBindCheckName(check));
  }
  void podPlaced(const PodPlacement& placed) override {
    if (placements_ != nullptr) placements_->placed(placed);
  }
  void podGone(const std::string& uid) override {
    if (placements_ != nullptr) placements_->forget(uid);
  }

 private:
  metrics::Metrics* const metrics_;
  PlacementRecorder* const placements_;
};

cluster::ClusterStateOptions stateOptions(const ServeOptions& options, metrics::Metrics* metrics,
                                          PlacementRecorder* placements) {
  cluster::ClusterStateOptions state;
  if (metrics != nullptr) {
    metrics->declareHoldReleaseReasons(cluster::holdReleaseNames());
    metrics->declareDraBindResults(cluster::draBindCheckNames());
  }
  if (metrics != nullptr || placements != nullptr) {
    state.events = std::make_shared<ServeEvents>(metrics, placements);
  }
  state.healthPoolLabel = options.healthPoolLabel;
  return state;
}

std::vector<std::string> levelLabels(const Policy& policy) {
  std::vector<std::string> out;
  for (const GroupLevel& level : policy.groups.levels)
    out.push_back(level.label);
  return out;
}

// The placed-whole/split series of the policy's levels exist from the start, and from each reload
// on for new levels.
void registerGroupLevels(const PolicyConstSharedPtr& policy, PolicyListeners& listeners,
                         metrics::Metrics* metrics) {
  if (metrics == nullptr) return;
  metrics->setGroupLevels(levelLabels(*policy));
  listeners.add(
      [metrics](const PolicyConstSharedPtr& p) { metrics->setGroupLevels(levelLabels(*p)); });
}

Result<ClusterWiring> staticBackend(const ServeOptions& options, PolicyConstSharedPtr policy,
                                    PolicyListeners& listeners, metrics::Metrics* metrics,
                                    PlacementRecorder* placements) {
  registerGroupLevels(policy, listeners, metrics);
  auto backend = cluster::StaticClusterBackend::fromFile(
      options.clusterFile, std::move(policy), stateOptions(options, metrics, placements));
  if (!backend) return std::move(backend).error();
  auto* raw = backend->get();
  listeners.add([raw](const PolicyConstSharedPtr& p) { raw->setPolicy(p); });
  // The file's pods, and how the cache keeps them: bound or reserved GPU pods it accounts,
  // pending GPU pods it keeps for bind and groups (pods that hold no device are not kept).
  log::info("cluster state from file",
            {{"file", options.clusterFile},
             {"nodes", std::to_string(raw->state().nodeCount())},
             {"pods", std::to_string(raw->filePodCount())},
             {"gpu_pods_placed", std::to_string(raw->state().podCount())},
             {"gpu_pods_pending", std::to_string(raw->state().pendingCount())}});
  ClusterWiring wiring;
  wiring.counts = countsOf(raw);
  wiring.backend = std::move(*backend);
  return wiring;
}

Result<ClusterWiring> apiServerBackend(const ServeOptions& options, PolicyConstSharedPtr policy,
                                       PolicyListeners& listeners, metrics::Metrics* metrics,
                                       PlacementRecorder* placements) {
  auto config = options.cluster == ClusterSource::kInCluster
                    ? kube::inClusterConfig()
                    : kube::loadKubeconfigFile(options.kubeconfig);
  if (!config) return std::move(config).error();
  registerGroupLevels(policy, listeners, metrics);
  cluster::ApiServerBackendOptions backendOptions;
  backendOptions.state = stateOptions(options, metrics, placements);
  backendOptions.bind.concurrency = options.bindConcurrency;
  backendOptions.bind.deadline = options.bindDeadline;
  backendOptions.warmConnections = options.apiWarmConnections;
  backendOptions.watchDra = options.dra;
  if (auto elected = addLeaderElection(options, backendOptions); !elected) {
    return std::move(elected).error();
  }
  auto backend =
      cluster::makeApiServerBackend(*config, std::move(policy), std::move(backendOptions));
  if (!backend) return std::move(backend).error();
  auto* raw = backend->get();
  listeners.add([raw](const PolicyConstSharedPtr& p) { raw->setPolicy(p); });
  raw->start();
  log::info(
      "watching nodes and pods",
      {{"source", options.cluster == ClusterSource::kInCluster ? "in-cluster" : "kubeconfig"}});
  ClusterWiring wiring;
  wiring.counts = countsOf(raw);
  if (options.leaderElection != LeaderElection::kNone) wiring.stepDown = [raw] { raw->stepDown(); };
  wiring.backend = std::move(*backend);
  return wiring;
}

}  // namespace

ClusterWiring::ClusterWiring() = default;
ClusterWiring::ClusterWiring(ClusterWiring&&) noexcept = default;
ClusterWiring::~ClusterWiring() = default;

Result<ClusterWiring> makeClusterBackend(const ServeOptions& options, PolicyConstSharedPtr policy,
                                         PolicyListeners& listeners, metrics::Metrics* metrics,
                                         PlacementRecorder* placements) {
  switch (options.cluster) {
    case ClusterSource::kNone:
      log::info(
          "no cluster connection: deciding from the Node objects in each request "
          "(nodeCacheCapable: false)");
      return ClusterWiring{};
    case ClusterSource::kClusterFile:
      return staticBackend(options, std::move(policy), listeners, metrics, placements);
    case ClusterSource::kKubeconfig:
    case ClusterSource::kInCluster:
      return apiServerBackend(options, std::move(policy), listeners, metrics, placements);
  }
  return Error{ErrorCode::kInternal, "unknown cluster source"};
}

}  // namespace gte::app
