#include "app/cluster_observer.h"

#include "log/logger.h"
#include "metrics/metrics.h"
#include "service/cluster_backend.h"
#include "snapshot/cluster_snapshot.h"
#include "snapshot/node_state.h"

namespace gte::app {

ClusterObserver::ClusterObserver(const ClusterBackend& backend, std::function<CacheCounts()> counts,
                                 metrics::Metrics& metrics, std::chrono::milliseconds interval)
    : backend_(backend), counts_(std::move(counts)), metrics_(metrics) {
  thread_ = std::thread([this, interval] { run(interval); });
}

ClusterObserver::~ClusterObserver() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ClusterObserver::run(std::chrono::milliseconds interval) {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    observe();
    lock.lock();
    wake_.wait_for(lock, interval, [this] { return stopping_; });
  }
}

void ClusterObserver::observe() {
  const CacheCounts c = counts_();
  metrics_.setCachedObjects(c.nodes, c.pods, c.reservations);
  const auto snapshot = backend_.snapshot();
  if (!snapshot || snapshot->generation == lastGeneration_) return;
  if (snapshot->generation > lastGeneration_) {
    metrics_.countSnapshotBuilds(snapshot->generation - lastGeneration_);
  }
  lastGeneration_ = snapshot->generation;

  std::unordered_map<std::string, std::string> now;
  snapshot->nodes.forEach([&](const std::string& name, const NodeStateConstSharedPtr& state) {
    if (!state || state->status != TopologyStatus::kMalformed) return;
    auto it = malformed_.find(name);
    if (it == malformed_.end() || it->second != state->topologyError) {
      log::warn("node topology labels malformed; topology treated as unknown",
                {{"node", name}, {"error", state->topologyError}});
      metrics_.countNodeTopologyError();
    }
    now.emplace(name, state->topologyError);
  });
  for (const auto& [name, error] : malformed_) {
    if (!now.contains(name)) log::info("node topology labels readable again", {{"node", name}});
  }
  malformed_ = std::move(now);
  metrics_.setMalformedNodes(static_cast<std::int64_t>(malformed_.size()));
}

}  // namespace gte::app
