#pragma once
// One list+watch that starts only once the API server's discovery lists its resource: a watch of
// a resource that is not served would fail forever (and fail /healthz). Used for
// resource.k8s.io/v1 DeviceTaintRules, served by Kubernetes 1.37 and later (docs/dra.md,
// "Watches"): on an older API server the extender runs without them, and one that starts serving
// them (an upgrade) is picked up at the next discover().
//
//   DiscoveredWatch rules(transport, type, [&] { return reflectorFor(sinkWith(watch.listed())); });
//   rules.discover();       // housekeeping: at start, then every so often until it answers
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/mutex.h"
#include "kube/api_transport.h"
#include "kube/reflector.h"
#include "kube/resource_path.h"

namespace gte::cluster {

struct DiscoveredWatchCounts {
  bool watched = false;  // discovery listed the resource and its watch was started
  // Whether the API server serves the resource; empty until discovery answered.
  std::optional<bool> served;
  std::uint64_t lists = 0;
  std::uint64_t failures = 0;
  std::uint64_t skipped = 0;
};

class DiscoveredWatch {
 public:
  // Builds the watch once the resource is served; `markListed` (for its sink) records that its
  // first full list was applied, and runs `onListed`.
  using MakeWatch =
      std::function<std::unique_ptr<kube::Reflector>(std::function<void()> markListed)>;

  // onListed runs after each completed full list, and after a discover() that answered.
  DiscoveredWatch(std::shared_ptr<kube::ApiTransport> transport, kube::ResourceType type,
                  MakeWatch make, std::function<void()> onListed);
  ~DiscoveredWatch();  // stop()
  DiscoveredWatch(const DiscoveredWatch&) = delete;
  DiscoveredWatch& operator=(const DiscoveredWatch&) = delete;

  // Asks discovery (unless watching already) and starts the watch if served. False when it could
  // not tell (no answer, HTTP 5xx): call again soon. Any other answer counts as "not served"
  // (logged). Blocks on the API server: housekeeping thread.
  bool discover();
  // discover() answered, and the watch, if started, has applied its first full list.
  bool synced() const;
  bool healthy(std::string* why) const;
  void stop(std::chrono::milliseconds deadline = std::chrono::seconds(5));
  DiscoveredWatchCounts counts() const;

 private:
  std::shared_ptr<kube::ApiTransport> transport_;
  kube::ResourceType type_;
  MakeWatch make_;
  std::function<void()> onListed_;
  // Set by the sink (shared with the watch thread, which may outlive this object).
  std::shared_ptr<std::atomic<bool>> listed_;
  mutable Mutex mutex_;
  std::unique_ptr<kube::Reflector> watch_ GTE_GUARDED_BY(mutex_);
  bool answered_ GTE_GUARDED_BY(mutex_) = false;
  bool saidNotServed_ GTE_GUARDED_BY(mutex_) = false;  // logged once
  bool stopped_ GTE_GUARDED_BY(mutex_) = false;
};

}  // namespace gte::cluster
