#pragma once
// The "resolve" step every request that decides on nodes shares (filter, prioritize, explain): the
// request's nodes as NodeCandidates, from the request's own Node objects through the memo
// (full-Node mode) or from the cluster snapshot (NodeNames mode), with whatever keeps their states
// alive for the request. Explain resolving exactly as filter and prioritize do is what makes its
// numbers theirs.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "core/node_candidate.h"
#include "core/node_state.h"
#include "policy/policy.h"
#include "service/resolution_memo.h"
#include "snapshot/cluster_snapshot.h"
#include "wire/extender_args.h"

namespace gte {
class ClusterBackend;
class NodeStateCache;
namespace metrics {
class Metrics;
}

// The request's nodes resolved to NodeStates, and what keeps those states alive for the request.
struct Resolved {
  PolicyConstSharedPtr policy;
  std::vector<NodeCandidate> candidates;
  std::vector<std::string_view> raw;  // full-Node mode: each candidate's bytes, to echo
  bool nodesMode = false;
  ClusterSnapshotConstSharedPtr snapshot;
  std::vector<NodeStateConstSharedPtr> held;
  // NodeNames mode, when asked for: each candidate's pod-group facts (null where unknown).
  std::vector<const NodeGroupFacts*> groupFacts;
};

using PolicySource = std::function<std::shared_ptr<const Policy>()>;

// Errors: kFailedPrecondition (NodeNames without a cluster cache), kUnavailable (cache not synced).
// `snapshot` is the one the request loaded (null without a cluster): NodeNames are resolved in it,
// never in a newer one, so every step of the request reads the same cluster. `policy` decides
// full Node objects. `groupFacts`: also collect each candidate's pod-group facts (a group member's
// request). `memo` (may be null): NodeNames lookups kept between requests (resolution_memo.h).
Result<Resolved> resolveNodes(const wire::ExtenderArgs& args, const ClusterBackend* cluster,
                              const ClusterSnapshotConstSharedPtr& snapshot,
                              PolicyConstSharedPtr policy, NodeStateCache& cache,
                              metrics::Metrics* metrics, bool groupFacts = false,
                              ResolutionMemo* memo = nullptr);

// The DRA objects pods are resolved against: the snapshot's (cache mode with --dra), else null.
inline const dra::DraObjects* draObjectsOf(const Resolved& resolved) {
  return resolved.snapshot ? resolved.snapshot->dra.get() : nullptr;
}

// The published snapshot, once it holds a full list (every verb that reads the cluster cache
// loads it through this, once per request). Errors as above.
Result<ClusterSnapshotConstSharedPtr> syncedSnapshot(const ClusterBackend* cluster);
// The same check on a snapshot the request has loaded already (null: none was, or no cluster).
Result<ClusterSnapshotConstSharedPtr> syncedSnapshot(const ClusterBackend* cluster,
                                                     ClusterSnapshotConstSharedPtr loaded);

// Every node of the cluster snapshot, sorted by name (explain of a pod by name), with their
// pod-group facts. Errors as above.
Result<Resolved> resolveAllNodes(const ClusterBackend* cluster);

}  // namespace gte
