#pragma once
// The extender's Prometheus metrics. Families and label sets are registered once at start-up and
// held by reference (prometheus-cpp's Add() per event is slow); labels are bounded: verb, HTTP
// code, outcome — never node or pod names. prometheus-cpp headers stay in metrics.cpp.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "wire/verb.h"

namespace gte::metrics {

enum class NodeOutcome { kFit, kUnschedulable, kUnresolvable };
enum class ReloadResult { kOk, kError };
// The `resource` label of the watch counters; the DRA kinds are watched with --dra
// (devicetaintrules where the API server serves them), podgroups, jobs and jobsets where the API
// server serves them (group sizes).
enum class WatchedResource {
  kNodes,
  kPods,
  kResourceSlices,
  kDeviceClasses,
  kResourceClaims,
  kPodGroups,
  kJobs,
  kJobSets,
  kDeviceTaintRules
};
enum class BindAbandonReason { kCallerGone, kDeadline, kNotLeader };
// Upper bounds (seconds) of the node-label-age buckets; a last bucket is +Inf.
inline constexpr std::array<std::int64_t, 6> kLabelAgeBounds = {60, 300, 900, 3600, 21600, 86400};

// How old the nodes' `gen` labels are now: the oldest, and how many nodes fall in each bucket
// (not cumulative; the last bucket is +Inf). Nodes without a gen label are not counted.
struct LabelAges {
  std::int64_t maxSeconds = 0;  // 0 when no node has a gen label
  std::array<std::int64_t, kLabelAgeBounds.size() + 1> perBucket{};
  double sumSeconds = 0;
};

// Free whole GPUs by the size of the largest all-NVLink set of free GPUs each belongs to: how
// fragmented the cluster is for multi-GPU jobs.
enum class NvlinkSetClass { k1, k2, k3to4, k5to8, k9to16, kUnknownLinks, kCount };
using FreeGpusByNvlinkSet =
    std::array<std::int64_t, static_cast<std::size_t>(NvlinkSetClass::kCount)>;

// Placement regret (docs/topology-health.md): why a pod got a weaker link class than the best any
// node offered, and why a placement could not be measured.
enum class PlacementReason { kNoBetterFit, kPolicyTradeoff, kSchedulerOverride, kAvoidedDegraded };
enum class UnmeasuredReason { kNoDecision, kSetUnknown };

// The request sizes the fragmentation gauges are given for (label k), in this order.
inline constexpr std::array<int, 4> kFragmentationGaugeSizes = {1, 2, 4, 8};

// One pool's fragmentation figures (label pool); per-size arrays follow kFragmentationGaugeSizes.
struct PoolFragmentation {
  std::string pool;
  std::array<std::int64_t, 4> hostable{};    // k-GPU pods of the best class the free GPUs host
  std::array<std::int64_t, 4> packed{};      // ... they would host if packed
  std::array<std::int64_t, 4> nvlinkSets{};  // disjoint free all-NVLink k-sets (k >= 2 exported)
  std::array<std::int64_t, 4> stranded{};    // free GPUs in no free all-NVLink k-set (k >= 2)
  std::int64_t strandedMigSlices = 0;
  double expectedUnusableGpus = 0;  // FGD-style, equal shares of the sizes
  std::int64_t freeGpus = 0;
  // GPUs the device plugin shares (docs/sharing.md): how many, their replicas held and not, and
  // the tenants per shared GPU at each of kSharedTenantQuantiles.
  std::int64_t sharedGpus = 0;
  std::int64_t sharedReplicasUsed = 0;
  std::int64_t sharedReplicasFree = 0;
  std::array<std::int64_t, 3> sharedTenants{};
  // MIG devices the device plugin shares: their replicas held and not.
  std::int64_t sharedMigReplicasUsed = 0;
  std::int64_t sharedMigReplicasFree = 0;
  // Hardware the node agent marks (docs/health.md).
  std::int64_t failedGpus = 0;
  std::int64_t degradedGpus = 0;
  std::int64_t cordonedGpus = 0;
  std::int64_t degradedLinks = 0;
  std::int64_t downLinks = 0;
  std::int64_t cordonedLinks = 0;
  std::int64_t degradedGpusInUse = 0;
  std::int64_t degradedLinksInUse = 0;
};

// The quantiles of tenants per shared GPU exported per pool (label stat: `quantile` is reserved for
// summaries), in this order, and their values.
inline constexpr std::array<std::string_view, 3> kSharedTenantQuantiles = {"p50", "p95", "max"};
inline constexpr std::array<double, 3> kSharedTenantQuantileValues = {0.5, 0.95, 1.0};

// Pending GPU pods by the whole GPUs they ask for: 1, 2, 4, 8 and other (3, 5-7, more than 8,
// MIG only).
using PendingGpuPods = std::array<std::int64_t, 5>;

class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // One HTTP request to a verb or explain: its status code and wall time. The `verb` label is the
  // extender verb's name, "other" for explain, whatif and nodes.
  void observeRequest(wire::Verb verb, int httpStatus, double seconds);
  // One request to a path that is no endpoint (label verb="other").
  void observeUnknownPath(int httpStatus);
  // Per-node filter verdicts.
  void countFilterNodes(NodeOutcome outcome, std::uint64_t n);
  // A node whose topology labels could not be read (one per node and label change).
  void countNodeTopologyError();
  void countPolicyReload(ReloadResult result);
  void setPolicyHash(std::string_view hash);
  // Snapshots published (generations), in cluster-cache mode.
  void countSnapshotBuilds(std::uint64_t n);
  // One snapshot build's wall time (cluster-cache mode).
  void observeSnapshotBuild(double seconds);
  // Nodes whose topology labels are malformed right now (cluster-cache mode).
  void setMalformedNodes(std::int64_t n);
  void setCachedObjects(std::int64_t nodes, std::int64_t pods, std::int64_t reservations);
  void countBind(bool ok);
  // A bind dropped before its Binding was sent: its caller closed the connection, or it waited past
  // --bind-deadline. Also counted as a failed bind.
  void countBindAbandoned(BindAbandonReason reason);
  // Binds holding a --bind-concurrency slot, and binds waiting for one (sampled).
  void setBindsInFlight(std::int64_t sending, std::int64_t waiting);
  // Leader election (sampled with the cache gauges): whether this replica answers binds (1 also
  // without leader election), the terms it began, the seconds since the lease's record last
  // changed as seen here, and its last takeover's duration. The last two are exported from
  // their first call on.
  void setLeader(bool leader);
  void countLeaderTransitions(std::uint64_t n);
  void setLeaseRenewAge(double seconds);
  void setLastTakeover(double seconds);
  void countRejectedRequest(std::string_view reason);  // body too large, bad JSON, ...

  // gpu_topology_extender_build_info{version, revision} = 1, set once at start-up.
  void setBuildInfo(std::string_view version, std::string_view revision);
  // 1 once the first full list of nodes and pods is in (always 1 with a cluster file).
  void setCacheSynced(bool synced);
  void countWatchLists(WatchedResource resource, std::uint64_t n);
  void countWatchFailures(WatchedResource resource, std::uint64_t n);
  // List items and watch events skipped: the object did not read (each also logged).
  void countWatchSkipped(WatchedResource resource, std::uint64_t n);
  // 1 while the API server serves the resource (and it is watched), 0 while discovery says it does
  // not (an older Kubernetes): the features that need it are off. Exported per resource from the
  // first answer on.
  void setWatchServed(WatchedResource resource, bool served);
  // DRA objects in the cluster cache (--dra).
  void setCachedDraObjects(std::int64_t slices, std::int64_t classes, std::int64_t claims,
                           std::int64_t taintRules);
  // A filter call for a pod whose DRA demand the extender passed through uninterpreted; `reason`
  // is core's name of it (draPassThroughName), declared by the service
  // (declareDraPassThroughReasons with draPassThroughNames()); a name not declared is not counted.
  void countDraPassThrough(std::string_view reason);
  void declareDraPassThroughReasons(const std::vector<std::string_view>& reasons);
  // A claim pod's first bind: its claims' allocation against the prediction.
  // `result` is the bind check's own name of it (cluster::draBindCheckName), declared by the
  // wiring (declareDraBindResults with cluster::draBindCheckNames()).
  void countDraBindPrediction(std::string_view result);
  void declareDraBindResults(const std::vector<std::string_view>& results);
  void setNodeLabelAges(const LabelAges& ages);

  // --- Pod groups.
  // `outcome` is the service's own name of it (groupOutcomeName), declared by the service
  // (declareGroupDecisionOutcomes with groupOutcomeNames()); a name not declared is not counted.
  void countGroupDecision(std::string_view outcome);
  void declareGroupDecisionOutcomes(const std::vector<std::string_view>& outcomes);
  // A group's first member's planning and commit, in seconds.
  void observeGroupPlanning(double seconds);
  // Registers the placed-whole/split series of these level labels (the policy's), at 0.
  void setGroupLevels(const std::vector<std::string>& labels);
  // A group's last planned member bound: whether all its members share one domain of `level`.
  void countGroupPlaced(std::string_view level, bool whole);
  void observeGroupFirstToLast(double seconds);
  // `reason` is the group book's own name of it (cluster::holdReleaseName); a name not declared
  // is not counted, so the label's values stay the declared set.
  void countHoldsReleased(std::string_view reason, std::uint64_t n);
  // The reasons' names (cluster::holdReleaseNames), each series made at 0 before anything is
  // released, so dashboards and alerts see them all. Called once by the wiring.
  void declareHoldReleaseReasons(const std::vector<std::string_view>& reasons);
  // Slots held now, and groups holding any (sampled with the cache gauges).
  void setGroupHolds(std::int64_t slots, std::int64_t groups);
  void setFreeGpusByNvlinkSet(const FreeGpusByNvlinkSet& counts);
  // Replaces every pool's fragmentation series; pools not listed lose theirs.
  void setFragmentation(const std::vector<PoolFragmentation>& pools);
  void setPendingGpuPods(const PendingGpuPods& pods);

  // A pod of `gpus` >= 2 whole GPUs seen bound: its regret ratio (0..1).
  void observePlacementRegret(std::int64_t gpus, double ratio);
  // ... and it got a weaker link class than the best any node offered.
  void countPlacementBelowBestClass(std::int64_t gpus, PlacementReason reason);
  void countPlacementUnmeasured(UnmeasuredReason reason);
  // The decisions kept for regret and explain, and the bytes they hold.
  void setPlacementDecisions(std::int64_t tracked, std::int64_t bytes);

  // The text exposition format (version 0.0.4) of everything registered.
  std::string serialize() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gte::metrics
