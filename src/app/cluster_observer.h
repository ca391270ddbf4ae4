#pragma once
// Watches the published cluster snapshots from the side, for operators: logs each node whose
// topology labels become malformed (once per node and label change, naming node and key), and
// keeps the cache metrics current (sizes, sync, watch progress, label age, fragmentation). Runs on
// its own thread, reads snapshots only (never blocks the writers), and stops with its owner.
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "base/mutex.h"
#include "metrics/metrics.h"

namespace gte {
class ClusterBackend;
class PlacementRecorder;
struct ClusterSnapshot;
struct NodeState;

namespace app {

// Totals of one list+watch since start-up (the observer turns them into counter increments).
struct WatchTotals {
  std::uint64_t lists = 0;
  std::uint64_t failures = 0;
  std::uint64_t skipped = 0;
  // Whether the API server serves the resource; empty while unknown or not watched at all (the
  // DRA kinds without --dra).
  std::optional<bool> served;
};

// Leader election as the backend reports it (an API-server backend with --leader-elect or
// --follow-lease; otherwise `elected` is false and this replica always answers binds).
struct LeadershipCounts {
  bool elected = false;
  bool leader = true;  // answers binds now
  std::uint64_t startedLeading = 0;
  std::optional<double> renewAgeSeconds;
  std::optional<double> lastTakeoverSeconds;
};

// The watches' `resource` label values, in metrics::WatchedResource order.
inline constexpr std::size_t kWatchedResources = 9;

struct CacheCounts {
  std::int64_t nodes = 0;
  std::int64_t pods = 0;
  std::int64_t reservations = 0;
  // API-server watches only; a cluster file has none.
  bool watched = false;
  // Per metrics::WatchedResource: nodes, pods, the DRA kinds (zeros without --dra), then the
  // group-size owners (zeros while the API server does not serve them), then DeviceTaintRules
  // (--dra, zeros while not served).
  std::array<WatchTotals, kWatchedResources> watches{};
  // --dra: what the cache holds of the DRA objects.
  bool dra = false;
  std::int64_t slices = 0;
  std::int64_t classes = 0;
  std::int64_t claims = 0;
  std::int64_t taintRules = 0;
  // Binds holding one of --bind-concurrency slots, and binds waiting for one (API server only).
  std::int64_t bindsSending = 0;
  std::int64_t bindsWaiting = 0;
  LeadershipCounts leadership;
  // Pending GPU pods by whole GPUs requested (1, 2, 4, 8, other).
  metrics::PendingGpuPods pendingGpuPods{};
};

class ClusterObserver {
 public:
  // `now` gives unix seconds, for the age of the nodes' `gen` labels (tests pass a fixed clock).
  // `placements` (may be null): placement regret's memory, whose size is reported.
  ClusterObserver(const ClusterBackend& backend, std::function<CacheCounts()> counts,
                  metrics::Metrics& metrics, std::chrono::milliseconds interval,
                  std::function<std::int64_t()> now = nullptr,
                  const PlacementRecorder* placements = nullptr);
  ~ClusterObserver();
  ClusterObserver(const ClusterObserver&) = delete;
  ClusterObserver& operator=(const ClusterObserver&) = delete;

  // One observation now. The thread calls this every interval and tests call it directly, so
  // observations are serialised: each turns totals into increments against the last one.
  void observe();

 private:
  void run(std::chrono::milliseconds interval);
  void observeWatches(const CacheCounts& counts) GTE_REQUIRES(observing_);
  void observeLeadership(const LeadershipCounts& leadership) GTE_REQUIRES(observing_);
  void observeNodes(const ClusterSnapshot& snapshot) GTE_REQUIRES(observing_);
  // Slots held for pod groups, and the groups holding them.
  void observeGroups(const ClusterSnapshot& snapshot) GTE_REQUIRES(observing_);

  const ClusterBackend& backend_;
  std::function<CacheCounts()> counts_;
  metrics::Metrics& metrics_;
  std::function<std::int64_t()> now_;
  const PlacementRecorder* placements_;
  // What the last observation saw, each under observing_ (held for a whole observation).
  Mutex observing_;
  std::uint64_t lastGeneration_ GTE_GUARDED_BY(observing_) = 0;
  std::array<WatchTotals, kWatchedResources> lastWatches_ GTE_GUARDED_BY(observing_){};
  std::uint64_t lastStartedLeading_ GTE_GUARDED_BY(observing_) = 0;
  // node -> error already reported
  std::unordered_map<std::string, std::string> malformed_ GTE_GUARDED_BY(observing_);
  // nodes whose approximate pick was reported
  std::unordered_set<std::string> approximate_ GTE_GUARDED_BY(observing_);
  // nodes whose GPU sharing labels do not read (treated as shared), as reported
  std::unordered_set<std::string> unreadableSharing_ GTE_GUARDED_BY(observing_);
  // node -> its state last observed and that state's free GPUs by NVLink set size (recomputed only
  // for nodes whose state changed).
  struct NodeFragments {
    std::shared_ptr<const NodeState> state;
    metrics::FreeGpusByNvlinkSet freeGpus{};
  };
  std::unordered_map<std::string, NodeFragments> fragments_ GTE_GUARDED_BY(observing_);

  Mutex mutex_;
  std::condition_variable_any wake_;
  bool stopping_ GTE_GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace app
}  // namespace gte
