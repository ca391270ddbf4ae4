#pragma once
// Placement regret's memory (docs/topology-health.md, "Placement regret"): per pod UID, what
// prioritize saw when it decided the pod (the best set any node offered a pod of its size, the
// best the candidates offered, the worst among those it ranked top), and once the cluster cache
// sees the pod bound, the set it got and its regret, which go to the metrics and to the pod's
// explain output. Bounded: the least recently touched entries go first beyond `capacity`, entries
// older than `maxAge` on every insert, a pod's entry when it is deleted.
//
// Thread-safe: prioritize records from the decision threads, the cluster cache reports
// placements from the watch thread (or a bind's), explain reads. One mutex guards the entries,
// held for a map operation and a list splice; never while calling out.
#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "base/mutex.h"
#include "health/placement_regret.h"

namespace gte {
namespace metrics {
class Metrics;
}

// One pod as placement regret knows it.
struct PlacementRecord {
  PlacementDecision decision;
  bool placed = false;     // seen bound: the fields below are set
  PodPlacement placement;  // the node and GPUs it got
  PlacementRegret regret;
};

struct PlacementRecorderOptions {
  std::size_t capacity = 4096;
  std::chrono::seconds maxAge = std::chrono::hours(6);
  std::function<std::chrono::steady_clock::time_point()> now;  // empty: steady_clock::now
};

class PlacementRecorder {
 public:
  using Clock = std::chrono::steady_clock;
  using Options = PlacementRecorderOptions;

  // `metrics` may be null (tests).
  explicit PlacementRecorder(metrics::Metrics* metrics, Options options = {});

  // prioritize decided a pod: replaces an earlier decision for the same UID (kube-scheduler
  // retries a pod it could not place).
  void decided(const std::string& uid, PlacementDecision decision);
  // The cluster cache saw the pod bound: its regret against its decision, counted in the metrics.
  void placed(const PodPlacement& placement);
  void forget(const std::string& uid);

  std::optional<PlacementRecord> find(std::string_view uid) const;
  std::size_t size() const;
  // Heap bytes the entries hold: the nodes of the list and the index, and their strings.
  std::size_t bytes() const;

 private:
  struct Entry {
    std::string uid;
    PlacementRecord record;
    Clock::time_point touched;
  };
  using Entries = std::list<Entry>;  // most recently touched first

  Clock::time_point now() const;
  // Moves the entry to the front, stamped now.
  void touchLocked(Entries::iterator entry, Clock::time_point at) GTE_REQUIRES(mutex_);
  void evictLocked(Clock::time_point at) GTE_REQUIRES(mutex_);
  void report(const PlacementRecord& record) const;

  metrics::Metrics* metrics_;
  const Options options_;
  mutable Mutex mutex_;
  Entries entries_ GTE_GUARDED_BY(mutex_);
  // keys view uid
  std::unordered_map<std::string_view, Entries::iterator> by_ GTE_GUARDED_BY(mutex_);
};

}  // namespace gte
