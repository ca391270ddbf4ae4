#pragma once
// The four extender verbs as request -> reply functions over the current policy and, in
// nodeCacheCapable mode, the cluster snapshot. Each verb is parse -> resolve -> core -> write:
// parse the body (src/wire), resolve the named nodes to NodeStates (the request's own Node objects
// through the memo, or the snapshot), run the per-request loop of the core (filterNodes,
// prioritizeNodes, planVictims), write the answer; errors go through one table (error_reply.h).
// No sockets here: the HTTP server is a thin transport, and tests drive this class with golden
// request bodies.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "core/compiled_pod.h"
#include "core/pod_demand.h"
#include "service/cluster_backend.h"
#include "service/group_requests.h"
#include "service/reply.h"
#include "service/resolve_nodes.h"
#include "service/whatif_request.h"
#include "snapshot/cluster_snapshot.h"
#include "wire/extender_args.h"
#include "wire/verb.h"

namespace gte {
class ClusterBackend;
namespace metrics {
class Metrics;
}
struct Policy;

class NodeStateCache;
class ResolutionMemo;
class PlacementRecorder;
struct PlacementRecord;
class GroupPreemptionMemory;
struct BoundPod;

// GET {prefix}/nodes: one node by name (404 when the cache does not hold it), or every node by
// name up to `limit`.
struct NodesQuery {
  std::string node;  // empty: every node
  std::size_t limit = SIZE_MAX;
};

class ExtenderService {
 public:
  using PolicySource = std::function<std::shared_ptr<const Policy>()>;

  // `cluster` is null when the extender runs without a cluster (decisions from the request's
  // Nodes; NodeNames requests are then answered with an Error). `metrics` may be null in tests.
  // `placements` (may be null) receives prioritize's decisions of pods of two or more GPUs in
  // NodeNames mode, for placement regret, and gives explain by name the pod's placement.
  // `preemptions` (null: the service keeps its own) remembers the group members whose preempt it
  // answered.
  ExtenderService(PolicySource policy, ClusterBackend* cluster, metrics::Metrics* metrics,
                  WhatifLimits whatifLimits = {}, PlacementRecorder* placements = nullptr,
                  std::shared_ptr<GroupPreemptionMemory> preemptions = nullptr);
  ~ExtenderService();
  ExtenderService(const ExtenderService&) = delete;
  ExtenderService& operator=(const ExtenderService&) = delete;

  Reply filter(std::string_view body) const;
  Reply prioritize(std::string_view body) const;
  // The same on a body already parsed (the router parses with its limits); a parse error is
  // answered as a malformed request.
  Reply filter(Result<wire::ExtenderArgs> args) const;
  Reply prioritize(Result<wire::ExtenderArgs> args) const;
  // Bind may wait on the API server, so it answers through `done` (possibly on another thread).
  // `caller` lets the backend drop a bind kube-scheduler has given up on.
  void bind(std::string_view body, std::function<void(Reply)> done, BindCaller caller = {}) const;
  Reply preempt(std::string_view body) const;

  // Explain (docs/api.md): an ExtenderArgs body answered with what filter and prioritize decide
  // for it, node by node, and why.
  Reply explain(std::string_view body) const;
  // Explain of a pod by "NAMESPACE/NAME" against every node of the cluster cache. May wait on the
  // API server (one GET of the pod): call it on a decision thread, never an I/O thread.
  Reply explainPod(std::string_view podRef) const;

  // What-if (docs/api.md): the body's pods placed one after another on a copy of the cluster
  // snapshot, under the running policy and optionally a proposed one. Read-only, one at a time
  // (a second one meanwhile is answered 503), bounded by WhatifLimits.
  Reply whatif(std::string_view body) const;
  // The cluster cache's nodes as the extender sees them now (docs/api.md, "Nodes").
  Reply nodes(const NodesQuery& query) const;

  bool ready(std::string* why) const;
  bool healthy(std::string* why) const;
  // A standby of a leader-elected extender: answers close their connections
  // (ClusterBackend::redirectsCallers).
  bool redirectsCallers() const;

 private:
  // One request's view, loaded and parsed once: the snapshot (null without a cluster), the policy
  // it decides with (the snapshot's, else the running one) and the pod compiled against both.
  struct Prepared {
    ClusterSnapshotConstSharedPtr snapshot;
    PolicyConstSharedPtr policy;
    CompiledPod pod;
  };
  Prepared prepare(const PodInfo& pod) const;
  // resolveNodes on the prepared snapshot (with group facts for a pod group member).
  Result<Resolved> resolve(const wire::ExtenderArgs& args, const Prepared& prepared) const;
  // The pod's group and its answers (service/group_requests.h); none for a pod of no group or
  // one that rejects itself.
  GroupDecision group(const wire::ExtenderArgs& args, const Prepared& prepared, Resolved& resolved,
                      GroupWrite write) const;
  // Explain's answer for a pod on resolved candidates (the group part read-only).
  // `placement`: what placement regret kept for the pod (explain by name).
  Reply explainResolved(const PodInfo& pod, const CompiledPod& compiled, Resolved& resolved,
                        std::string_view mode, const PlacementRecord* placement = nullptr,
                        const BoundPod* bound = nullptr) const;
  // A body that could not be parsed: logged, counted, answered per the error table.
  Reply rejected(wire::Verb verb, const Error& error) const;
  // A request that cannot be decided now (cache not synced) or here (a configuration mismatch):
  // logged at the level that says which, answered per the error table.
  Reply undecided(wire::Verb verb, const Error& error) const;
  // NodeNames mode, a pod without GPU, MIG or DRA demand (with the chart's extender.dra every pod
  // is sent): every node fits with score 0, whatever the cache knows of it, answered from the
  // names alone without looking a node up. nullopt: not such a pod (or the cache is not synced:
  // the general path answers; a pod of a group is decided with its group, and a pod that rejects
  // itself is rejected).
  std::optional<Reply> withoutDemand(const wire::ExtenderArgs& args, const Prepared& prepared,
                                     wire::Verb verb) const;

  PolicySource policy_;
  ClusterBackend* cluster_;
  metrics::Metrics* metrics_;
  PlacementRecorder* placements_;
  std::unique_ptr<NodeStateCache> nodeCache_;    // full-Node mode: NodeStates by label content
  std::unique_ptr<ResolutionMemo> resolutions_;  // NodeNames mode: lookups of the last name lists
  WhatifLimits whatifLimits_;
  mutable std::atomic<bool> whatifRunning_{false};
  // The group preemptions it answered, until the watch brings kube-scheduler's nominations.
  std::shared_ptr<GroupPreemptionMemory> preemptions_;
};

}  // namespace gte
