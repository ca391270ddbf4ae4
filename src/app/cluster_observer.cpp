#include "app/cluster_observer.h"

#include <algorithm>
#include <bit>

#include "core/node_state.h"
#include "log/logger.h"
#include "metrics/metrics.h"
#include "service/cluster_backend.h"
#include "service/placement_recorder.h"
#include "snapshot/cluster_snapshot.h"
#include "topology/nvlink_clique.h"

namespace gte::app {

namespace {

std::int64_t unixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

metrics::NvlinkSetClass classOf(int setSize) {
  if (setSize <= 1) return metrics::NvlinkSetClass::k1;
  if (setSize == 2) return metrics::NvlinkSetClass::k2;
  if (setSize <= 4) return metrics::NvlinkSetClass::k3to4;
  if (setSize <= 8) return metrics::NvlinkSetClass::k5to8;
  return metrics::NvlinkSetClass::k9to16;
}

metrics::FreeGpusByNvlinkSet freeGpusOf(const NodeState& state) {
  metrics::FreeGpusByNvlinkSet out{};
  if (!state.linksKnown()) {
    out[static_cast<std::size_t>(metrics::NvlinkSetClass::kUnknownLinks)] = state.freeCount;
    return out;
  }
  const auto sizes = nvlinkSetSizes(state.topology, state.freeMask);
  for (GpuMask rest = state.freeMask; rest != 0; rest &= rest - 1) {
    ++out[static_cast<std::size_t>(
        classOf(sizes[static_cast<std::size_t>(std::countr_zero(rest))]))];
  }
  return out;
}

// The snapshot's health figures as the fragmentation gauges take them.
std::vector<metrics::PoolFragmentation> fragmentationOf(const ClusterHealth& health) {
  static_assert(metrics::kFragmentationGaugeSizes == kHealthSizes);
  std::vector<metrics::PoolFragmentation> pools;
  pools.reserve(health.pools.size());
  for (const PoolHealth& pool : health.pools) {
    const HealthTotals& t = pool.totals;
    metrics::PoolFragmentation out;
    out.pool = pool.pool;
    for (std::size_t i = 0; i < kHealthSizeCount; ++i) {
      out.hostable[i] = t.hostable[i];
      out.packed[i] = t.packed(i);
      out.nvlinkSets[i] = t.nvlinkSets[i];
      out.stranded[i] = t.stranded[i];
    }
    out.strandedMigSlices = t.strandedMigSlices;
    out.expectedUnusableGpus = t.expectedUnusableGpus();
    out.freeGpus = t.freeGpus;
    out.sharedGpus = t.sharedGpus;
    out.sharedReplicasUsed = t.sharedReplicasUsed;
    out.sharedReplicasFree = t.sharedReplicasFree();
    out.sharedMigReplicasUsed = t.sharedMigReplicasUsed;
    out.sharedMigReplicasFree = t.sharedMigReplicasFree();
    for (std::size_t q = 0; q < metrics::kSharedTenantQuantileValues.size(); ++q)
      out.sharedTenants[q] = t.sharedTenantsAt(metrics::kSharedTenantQuantileValues[q]);
    out.failedGpus = t.failedGpus;
    out.degradedGpus = t.degradedGpus;
    out.cordonedGpus = t.cordonedGpus;
    out.degradedLinks = t.degradedLinks;
    out.downLinks = t.downLinks;
    out.cordonedLinks = t.cordonedLinks;
    out.degradedGpusInUse = t.degradedGpusInUse;
    out.degradedLinksInUse = t.degradedLinksInUse;
    pools.push_back(std::move(out));
  }
  return pools;
}

void addAge(metrics::LabelAges& ages, std::int64_t age) {
  ages.maxSeconds = std::max(ages.maxSeconds, age);
  ages.sumSeconds += static_cast<double>(age);
  const auto bucket =
      std::lower_bound(metrics::kLabelAgeBounds.begin(), metrics::kLabelAgeBounds.end(), age);
  ++ages.perBucket[static_cast<std::size_t>(bucket - metrics::kLabelAgeBounds.begin())];
}

}  // namespace

ClusterObserver::ClusterObserver(const ClusterBackend& backend, std::function<CacheCounts()> counts,
                                 metrics::Metrics& metrics, std::chrono::milliseconds interval,
                                 std::function<std::int64_t()> now,
                                 const PlacementRecorder* placements)
    : backend_(backend),
      counts_(std::move(counts)),
      metrics_(metrics),
      now_(now ? std::move(now) : std::function<std::int64_t()>(unixSeconds)),
      placements_(placements) {
  thread_ = std::thread([this, interval] { run(interval); });
}

ClusterObserver::~ClusterObserver() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ClusterObserver::run(std::chrono::milliseconds interval) {
  UniqueLock lock(mutex_);
  while (!stopping_) {
    lock.unlock();
    observe();
    lock.lock();
    wake_.wait_for(lock, interval, [this]() GTE_REQUIRES(mutex_) { return stopping_; });
  }
}

void ClusterObserver::observeWatches(const CacheCounts& counts) {
  if (!counts.watched) return;
  for (std::size_t i = 0; i < kWatchedResources; ++i) {
    const auto resource = static_cast<metrics::WatchedResource>(i);
    const WatchTotals& now = counts.watches[i];
    WatchTotals& last = lastWatches_[i];
    metrics_.countWatchLists(resource, now.lists - std::min(now.lists, last.lists));
    metrics_.countWatchFailures(resource, now.failures - std::min(now.failures, last.failures));
    metrics_.countWatchSkipped(resource, now.skipped - std::min(now.skipped, last.skipped));
    if (now.served) metrics_.setWatchServed(resource, *now.served);
    last = now;
  }
  if (counts.dra) {
    metrics_.setCachedDraObjects(counts.slices, counts.classes, counts.claims, counts.taintRules);
  }
}

void ClusterObserver::observeLeadership(const LeadershipCounts& leadership) {
  metrics_.setLeader(leadership.leader);
  if (!leadership.elected) return;
  metrics_.countLeaderTransitions(leadership.startedLeading -
                                  std::min(leadership.startedLeading, lastStartedLeading_));
  lastStartedLeading_ = leadership.startedLeading;
  if (leadership.renewAgeSeconds) metrics_.setLeaseRenewAge(*leadership.renewAgeSeconds);
  if (leadership.lastTakeoverSeconds) metrics_.setLastTakeover(*leadership.lastTakeoverSeconds);
}

void ClusterObserver::observe() {
  MutexLock observing(observing_);
  const CacheCounts c = counts_();
  metrics_.setCachedObjects(c.nodes, c.pods, c.reservations);
  metrics_.setBindsInFlight(c.bindsSending, c.bindsWaiting);
  metrics_.setPendingGpuPods(c.pendingGpuPods);
  if (placements_ != nullptr) {
    metrics_.setPlacementDecisions(static_cast<std::int64_t>(placements_->size()),
                                   static_cast<std::int64_t>(placements_->bytes()));
  }
  observeWatches(c);
  observeLeadership(c.leadership);
  const auto snapshot = backend_.snapshot();
  if (!snapshot) return;
  metrics_.setCacheSynced(snapshot->synced);
  observeGroups(*snapshot);
  // Label ages grow with the clock, not with the snapshot: recomputed on every observation.
  metrics::LabelAges ages;
  const std::int64_t now = now_();
  snapshot->nodes.forEach([&](const std::string&, const NodeStateConstSharedPtr& state) {
    if (state && state->topology.generation > 0) {
      addAge(ages, std::max<std::int64_t>(0, now - state->topology.generation));
    }
  });
  metrics_.setNodeLabelAges(ages);
  if (snapshot->generation == lastGeneration_) return;
  if (snapshot->generation > lastGeneration_) {
    metrics_.countSnapshotBuilds(snapshot->generation - lastGeneration_);
  }
  lastGeneration_ = snapshot->generation;
  observeNodes(*snapshot);
}

void ClusterObserver::observeGroups(const ClusterSnapshot& snapshot) {
  std::int64_t slots = 0;
  std::int64_t groups = 0;
  if (snapshot.groupPlans) {
    for (const auto& [key, plan] : *snapshot.groupPlans) {
      const auto held = static_cast<std::int64_t>(plan->heldCount());
      slots += held;
      groups += held > 0 ? 1 : 0;
    }
  }
  metrics_.setGroupHolds(slots, groups);
}

void ClusterObserver::observeNodes(const ClusterSnapshot& snapshot) {
  std::unordered_map<std::string, NodeFragments> fragments;
  metrics::FreeGpusByNvlinkSet freeGpus{};
  std::unordered_map<std::string, std::string> now;
  std::unordered_set<std::string> approximate;
  std::unordered_set<std::string> unreadableSharing;
  // forEach, a template, calls the lambda in place with observing_ held; clang cannot carry the
  // lock into a lambda a template calls, so the lambda alone is not analysed.
  snapshot.nodes.forEach([&](const std::string& name,
                             const NodeStateConstSharedPtr& state) GTE_NO_THREAD_SAFETY_ANALYSIS {
    if (!state) return;
    auto known = fragments_.find(name);
    NodeFragments entry = known != fragments_.end() && known->second.state == state
                              ? std::move(known->second)
                              : NodeFragments{state, freeGpusOf(*state)};
    for (std::size_t i = 0; i < freeGpus.size(); ++i)
      freeGpus[i] += entry.freeGpus[i];
    fragments.emplace(name, std::move(entry));
    if (state->devicePluginApproximate) {
      if (!approximate_.contains(name)) {
        log::warn("device plugin's pick approximated: GPU pair scores follow no switch hierarchy",
                  {{"node", name}});
      }
      approximate.insert(name);
    }
    // GPUs' and MIG profiles' sharing labels alike (docs/sharing.md): once per node.
    std::string unreadable = state->sharing.unreadable;
    if (state->sharedMig) {
      for (const SharedMigProfile& mig : *state->sharedMig) {
        if (mig.sharing.unreadable.empty()) continue;
        if (!unreadable.empty()) unreadable += "; ";
        unreadable += mig.sharing.unreadable;
      }
    }
    if (!unreadable.empty()) {
      if (!unreadableSharing_.contains(name)) {
        log::warn("node GPU sharing labels unreadable; its GPUs are treated as shared",
                  {{"node", name}, {"labels", unreadable}});
      }
      unreadableSharing.insert(name);
    }
    if (state->status != TopologyStatus::kMalformed) return;
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
  approximate_ = std::move(approximate);
  unreadableSharing_ = std::move(unreadableSharing);
  metrics_.setMalformedNodes(static_cast<std::int64_t>(malformed_.size()));
  fragments_ = std::move(fragments);
  metrics_.setFreeGpusByNvlinkSet(freeGpus);
  metrics_.setFragmentation(fragmentationOf(snapshot.health));
}

}  // namespace gte::app
