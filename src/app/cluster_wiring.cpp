#include "app/cluster_wiring.h"

#include "cluster/static_cluster_backend.h"
#include "log/logger.h"
#include "metrics/metrics.h"
#include "service/cluster_backend.h"

namespace gte::app {

void PolicyListeners::add(Listener listener) {
  std::lock_guard lock(mutex_);
  listeners_.push_back(std::move(listener));
}

void PolicyListeners::notify(const PolicyConstSharedPtr& policy) const {
  std::lock_guard lock(mutex_);
  for (const auto& l : listeners_) l(policy);
}

namespace {

Result<std::unique_ptr<ClusterBackend>> staticBackend(const ServeOptions& options,
                                                      PolicyConstSharedPtr policy,
                                                      PolicyListeners& listeners) {
  auto backend = cluster::StaticClusterBackend::fromFile(options.clusterFile, std::move(policy));
  if (!backend) return std::move(backend).error();
  auto* raw = backend->get();
  listeners.add([raw](const PolicyConstSharedPtr& p) { raw->setPolicy(p); });
  log::info("cluster state from file", {{"file", options.clusterFile},
                                        {"nodes", std::to_string(raw->state().nodeCount())},
                                        {"pods", std::to_string(raw->state().podCount())}});
  return std::unique_ptr<ClusterBackend>(std::move(*backend));
}

}  // namespace

Result<std::unique_ptr<ClusterBackend>> makeClusterBackend(const ServeOptions& options,
                                                           PolicyConstSharedPtr policy,
                                                           metrics::Metrics& metrics,
                                                           PolicyListeners& listeners) {
  (void)metrics;
  switch (options.cluster) {
    case ClusterSource::kNone:
      log::info("no cluster connection: deciding from the Node objects in each request "
                "(nodeCacheCapable: false)");
      return std::unique_ptr<ClusterBackend>();
    case ClusterSource::kClusterFile:
      return staticBackend(options, std::move(policy), listeners);
    case ClusterSource::kKubeconfig:
    case ClusterSource::kInCluster:
      break;
  }
  return Error{ErrorCode::kUnavailable, "API server backend not wired yet"};
}

}  // namespace gte::app
