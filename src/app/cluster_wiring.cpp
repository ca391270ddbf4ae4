#include "app/cluster_wiring.h"

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
    counts.watches[0] = WatchTotals{nodes.lists, nodes.failures, nodes.skipped};
    counts.watches[1] = WatchTotals{pods.lists, pods.failures, pods.skipped};
    std::size_t i = 2;
    for (const GroupOwnerKind kind :
         {GroupOwnerKind::kPodGroup, GroupOwnerKind::kJob, GroupOwnerKind::kJobSet}) {
      const cluster::OwnerWatchCounts owner = backend->ownerWatch(kind);
      counts.watches[i++] = WatchTotals{owner.lists, owner.failures, owner.skipped};
    }
    counts.bindsSending = static_cast<std::int64_t>(backend->bindsSending());
    counts.bindsWaiting = static_cast<std::int64_t>(backend->bindsWaiting());
    return counts;
  };
}

// `groups` receives the state's pod-group plans when the state is built (the backend hands them to
// the service).
cluster::ClusterStateOptions stateOptions(const ServeOptions& options, metrics::Metrics* metrics,
                                          PlacementRecorder* placements, GroupPlanStore** groups) {
  cluster::ClusterStateOptions state;
  if (metrics != nullptr) {
    state.onSnapshotBuilt = [metrics](double seconds) { metrics->observeSnapshotBuild(seconds); };
    state.groupObserver.released = [metrics](cluster::HoldRelease reason, std::size_t n) {
      metrics->countHoldsReleased(cluster::holdReleaseName(reason), n);
    };
    state.groupObserver.placed = [metrics](std::string_view level, bool whole) {
      metrics->countGroupPlaced(level, whole);
    };
    state.groupObserver.firstToLast = [metrics](double seconds) {
      metrics->observeGroupFirstToLast(seconds);
    };
  }
  state.attachGroupPlans = [groups](GroupPlanStore* store) { *groups = store; };
  if (placements != nullptr) {
    state.onPodPlaced = [placements](const PodPlacement& placed) { placements->placed(placed); };
    state.onPodGone = [placements](const std::string& uid) { placements->forget(uid); };
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
  GroupPlanStore* groups = nullptr;
  auto backend = cluster::StaticClusterBackend::fromFile(
      options.clusterFile, std::move(policy), stateOptions(options, metrics, placements, &groups));
  if (!backend) return std::move(backend).error();
  auto* raw = backend->get();
  raw->setGroupPlans(groups);
  listeners.add([raw](const PolicyConstSharedPtr& p) { raw->setPolicy(p); });
  log::info("cluster state from file", {{"file", options.clusterFile},
                                        {"nodes", std::to_string(raw->state().nodeCount())},
                                        {"pods", std::to_string(raw->state().podCount())}});
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
  GroupPlanStore* groups = nullptr;
  cluster::ApiServerBackendOptions backendOptions;
  backendOptions.state = stateOptions(options, metrics, placements, &groups);
  backendOptions.bind.concurrency = options.bindConcurrency;
  backendOptions.bind.deadline = options.bindDeadline;
  backendOptions.warmConnections = options.apiWarmConnections;
  auto backend =
      cluster::makeApiServerBackend(*config, std::move(policy), std::move(backendOptions));
  if (!backend) return std::move(backend).error();
  auto* raw = backend->get();
  raw->setGroupPlans(groups);  // the watch-fed state plans pod groups as the file's does
  listeners.add([raw](const PolicyConstSharedPtr& p) { raw->setPolicy(p); });
  raw->start();
  log::info(
      "watching nodes and pods",
      {{"source", options.cluster == ClusterSource::kInCluster ? "in-cluster" : "kubeconfig"}});
  ClusterWiring wiring;
  wiring.counts = countsOf(raw);
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
