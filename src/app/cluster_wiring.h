#pragma once
// Chooses and builds the cluster source from the command line: none (full-Node mode), an API-server
// watch (--kubeconfig, --in-cluster) or a static file (--cluster-file).
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "app/cli_options.h"
#include "app/cluster_observer.h"
#include "base/result.h"
#include "policy/policy.h"

namespace gte {
class ClusterBackend;
class PlacementRecorder;
namespace metrics {
class Metrics;
}

namespace app {

// Fan-out of policy changes from the PolicyStore's watcher thread to whoever rebuilds on them.
class PolicyListeners {
 public:
  using Listener = std::function<void(const PolicyConstSharedPtr&)>;
  void add(Listener listener);
  void notify(const PolicyConstSharedPtr& policy) const;

 private:
  mutable std::mutex mutex_;
  std::vector<Listener> listeners_;
};

struct ClusterWiring {
  ClusterWiring();
  ClusterWiring(ClusterWiring&&) noexcept;
  ~ClusterWiring();
  std::unique_ptr<ClusterBackend> backend;  // null for ClusterSource::kNone
  std::function<CacheCounts()> counts;      // the cache's sizes, for metrics
  // Graceful shutdown's first step: stop leading (release the lease) so a standby takes over
  // while this replica drains. Empty without leader election.
  std::function<void()> stepDown;
};

// `metrics` (may be null) receives each snapshot build's duration; `placements` (may be null) the
// pods the cache sees placed and gone, for placement regret.
Result<ClusterWiring> makeClusterBackend(const ServeOptions& options, PolicyConstSharedPtr policy,
                                         PolicyListeners& listeners, metrics::Metrics* metrics,
                                         PlacementRecorder* placements = nullptr);

}  // namespace app
}  // namespace gte
