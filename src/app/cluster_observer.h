#pragma once
// Watches the published cluster snapshots from the side, for operators: logs each node whose
// topology labels become malformed (once per node and label change, naming node and key), and
// keeps the cache metrics current. Runs on its own thread, reads snapshots only (never blocks the
// writers), and stops with its owner.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

namespace gte {
class ClusterBackend;
namespace metrics {
class Metrics;
}

namespace app {

struct CacheCounts {
  std::int64_t nodes = 0;
  std::int64_t pods = 0;
  std::int64_t reservations = 0;
};

class ClusterObserver {
 public:
  ClusterObserver(const ClusterBackend& backend, std::function<CacheCounts()> counts,
                  metrics::Metrics& metrics, std::chrono::milliseconds interval);
  ~ClusterObserver();
  ClusterObserver(const ClusterObserver&) = delete;
  ClusterObserver& operator=(const ClusterObserver&) = delete;

  // One observation now (the thread calls this every interval; tests call it directly).
  void observe();

 private:
  void run(std::chrono::milliseconds interval);

  const ClusterBackend& backend_;
  std::function<CacheCounts()> counts_;
  metrics::Metrics& metrics_;
  std::uint64_t lastGeneration_ = 0;
  std::unordered_map<std::string, std::string> malformed_;  // node -> error already reported

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace app
}  // namespace gte
