#include "service/resolve_nodes.h"

#include <algorithm>
#include <utility>

#include "log/logger.h"
#include "metrics/metrics.h"
#include "service/cluster_backend.h"
#include "service/node_state_cache.h"

namespace gte {
namespace {

constexpr std::string_view kUnreadable = "node object unreadable";
constexpr std::string_view kNotCached = "node not in the extender's cache";

// Full-Node mode: states from the request's own Node objects, memoised by content.
Resolved fromNodeObjects(const std::vector<wire::NodeItem>& items, PolicyConstSharedPtr policy,
                         NodeStateCache& cache, metrics::Metrics* metrics) {
  Resolved out;
  out.nodesMode = true;
  out.policy = std::move(policy);
  out.candidates.reserve(items.size());
  out.raw.reserve(items.size());
  out.held.reserve(items.size());
  for (const auto& item : items) {
    NodeCandidate c{item.name, nullptr, {}};
    if (!item.info) {
      c.missing = kUnreadable;
      log::warn("node object unreadable",
                {{"node", item.name}, {"error", item.info.error().message}});
    } else {
      auto lookup = cache.get(*item.info, out.policy);
      c.state = lookup.state.get();
      out.held.push_back(std::move(lookup.state));
      if (lookup.built && c.state->status == TopologyStatus::kMalformed) {
        log::warn("node topology labels malformed; topology treated as unknown",
                  {{"node", item.name}, {"error", c.state->topologyError}});
        if (metrics) metrics->countNodeTopologyError();
      }
    }
    out.candidates.push_back(c);
    out.raw.push_back(item.raw);
  }
  return out;
}

// The candidate of name `name` from its lookup.
void addFound(Resolved& out, std::string_view name, const NodeStateShard::Found& found,
              bool groupFacts) {
  out.candidates.push_back(
      {name, found.state, found.state ? std::string_view() : kNotCached, found.plain});
  if (groupFacts) out.groupFacts.push_back(found.group);
}

// NodeNames mode: states from the cluster snapshot, loaded once for the whole request; the
// lookups from `memo` when an earlier request made them (the same names, the same node shards).
Result<Resolved> fromSnapshot(const std::vector<std::string>& names, const ClusterBackend* cluster,
                              const ClusterSnapshotConstSharedPtr& given, bool groupFacts,
                              ResolutionMemo* memo) {
  auto loaded = syncedSnapshot(cluster, given);
  if (!loaded) return std::move(loaded).error();
  const ClusterSnapshotConstSharedPtr& snapshot = *loaded;
  Resolved out;
  out.policy = snapshot->policy;
  out.snapshot = snapshot;
  out.candidates.reserve(names.size());
  if (groupFacts) out.groupFacts.reserve(names.size());
  if (memo != nullptr) {
    if (const auto kept = memo->find(snapshot, names)) {
      for (std::size_t i = 0; i < names.size(); ++i)
        addFound(out, names[i], kept->found[i], groupFacts);
      return out;
    }
  }
  std::vector<NodeStateShard::Found> found;
  if (memo != nullptr) found.reserve(names.size());
  snapshot->nodes.findAll(names, [&](std::size_t i, NodeStateShard::Found lookup) {
    addFound(out, names[i], lookup, groupFacts);
    if (memo != nullptr) found.push_back(lookup);
  });
  if (memo != nullptr) memo->keep(snapshot, names, std::move(found));
  return out;
}

}  // namespace

Result<ClusterSnapshotConstSharedPtr> syncedSnapshot(const ClusterBackend* cluster) {
  return syncedSnapshot(cluster, cluster != nullptr ? cluster->snapshot() : nullptr);
}

Result<ClusterSnapshotConstSharedPtr> syncedSnapshot(const ClusterBackend* cluster,
                                                     ClusterSnapshotConstSharedPtr snapshot) {
  if (!cluster) {
    return Error{ErrorCode::kFailedPrecondition,
                 "NodeNames received but the extender runs without a cluster cache; start it with "
                 "--kubeconfig, --in-cluster or --cluster-file, or set nodeCacheCapable: false"};
  }
  if (!snapshot || !snapshot->synced) {
    return Error{ErrorCode::kUnavailable, "cache not synced"};
  }
  return snapshot;
}

Result<Resolved> resolveNodes(const wire::ExtenderArgs& args, const ClusterBackend* cluster,
                              const ClusterSnapshotConstSharedPtr& snapshot,
                              PolicyConstSharedPtr policy, NodeStateCache& cache,
                              metrics::Metrics* metrics, bool groupFacts, ResolutionMemo* memo) {
  if (args.nodes) return fromNodeObjects(*args.nodes, std::move(policy), cache, metrics);
  return fromSnapshot(*args.nodeNames, cluster, snapshot, groupFacts, memo);
}

Result<Resolved> resolveAllNodes(const ClusterBackend* cluster) {
  auto loaded = syncedSnapshot(cluster);
  if (!loaded) return std::move(loaded).error();
  Resolved out;
  out.policy = (*loaded)->policy;
  out.snapshot = *loaded;
  out.candidates.reserve(out.snapshot->nodes.size());
  out.snapshot->nodes.forEach(
      [&out](const std::string& name, const NodeStateConstSharedPtr& state) {
        out.candidates.push_back({name, state.get(), {}});
      });
  std::sort(out.candidates.begin(), out.candidates.end(),
            [](const NodeCandidate& a, const NodeCandidate& b) { return a.name < b.name; });
  out.groupFacts.reserve(out.candidates.size());
  for (const NodeCandidate& candidate : out.candidates)
    out.groupFacts.push_back(out.snapshot->nodes.groupFacts(candidate.name));
  return out;
}

}  // namespace gte
