#include "metrics/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <array>
#include <map>
#include <mutex>
#include <sstream>
#include <vector>

#include "base/mutex.h"

namespace gte::metrics {
namespace {

constexpr std::array<const char*, 5> kVerbNames = {"filter", "prioritize", "bind", "preempt",
                                                   "other"};
constexpr std::size_t kOtherVerb = kVerbNames.size() - 1;

std::size_t verbIndex(wire::Verb verb) noexcept {
  switch (verb) {
    case wire::Verb::kFilter:
      return 0;
    case wire::Verb::kPrioritize:
      return 1;
    case wire::Verb::kBind:
      return 2;
    case wire::Verb::kPreempt:
      return 3;
    case wire::Verb::kExplain:
    case wire::Verb::kWhatif:
    case wire::Verb::kNodes:
      break;
  }
  return kOtherVerb;
}
// The status codes the server answers; anything else is counted as "other".
constexpr std::array<int, 7> kCodes = {200, 400, 404, 405, 413, 500, 503};
constexpr std::array<const char*, 9> kRejectReasons = {
    "body_too_large",   "header_too_large",   "malformed_json", "bad_request", "request_timeout",
    "connection_limit", "full_nodes_refused", "too_many_nodes", "other"};

// A counter family whose label values are the feature's own names (declared once at start, each
// series made at 0), so this library keeps no copy of another library's vocabulary. A value not
// declared is not counted: the label keeps the declared set.
class DeclaredCounters {
 public:
  DeclaredCounters(prometheus::Family<prometheus::Counter>& family, std::string label)
      : family_(family), label_(std::move(label)) {}

  void declare(const std::vector<std::string_view>& values) {
    MutexLock lock(mutex_);
    for (const std::string_view value : values) {
      if (!series_.contains(value)) {
        series_.emplace(std::string(value), &family_.Add({{label_, std::string(value)}}));
      }
    }
  }

  void count(std::string_view value, double n) {
    MutexLock lock(mutex_);
    if (const auto it = series_.find(value); it != series_.end()) it->second->Increment(n);
  }

 private:
  prometheus::Family<prometheus::Counter>& family_;
  const std::string label_;
  Mutex mutex_;
  // Declared at start; counted from several threads.
  std::map<std::string, prometheus::Counter*, std::less<>> series_ GTE_GUARDED_BY(mutex_);
};

constexpr std::array<const char*, 9> kResourceNames = {
    "nodes",     "pods", "resourceslices", "deviceclasses",   "resourceclaims",
    "podgroups", "jobs", "jobsets",        "devicetaintrules"};
constexpr std::array<const char*, static_cast<std::size_t>(NvlinkSetClass::kCount)> kSetClassNames =
    {"1", "2", "3-4", "5-8", "9-16", "unknown"};

// Regret and pending labels: k = 2, 4, 8 and "other" for regret (a 1-GPU pod has no pair), k = 1,
// 2, 4, 8, "other" for pending pods.
constexpr std::array<const char*, 4> kRegretSizes = {"2", "4", "8", "other"};
constexpr std::array<const char*, 5> kPendingSizes = {"1", "2", "4", "8", "other"};
constexpr std::array<const char*, 4> kPlacementReasons = {"no_better_fit", "policy_tradeoff",
                                                          "scheduler_override", "avoided_degraded"};
constexpr std::array<const char*, 2> kUnmeasuredReasons = {"no_decision", "set_unknown"};

std::size_t regretSizeIndex(std::int64_t gpus) noexcept {
  switch (gpus) {
    case 2:
      return 0;
    case 4:
      return 1;
    case 8:
      return 2;
    default:
      return 3;
  }
}

prometheus::Histogram::BucketBoundaries labelAgeBuckets() {
  return {kLabelAgeBounds.begin(), kLabelAgeBounds.end()};
}

std::size_t codeIndex(int code) {
  for (std::size_t i = 0; i < kCodes.size(); ++i) {
    if (kCodes[i] == code) return i;
  }
  return kCodes.size();
}

}  // namespace

struct Metrics::Impl {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();

  prometheus::Family<prometheus::Counter>& requests =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_http_requests_total")
          .Help("HTTP requests answered, by extender verb and status code.")
          .Register(*registry);
  prometheus::Family<prometheus::Histogram>& latency =
      prometheus::BuildHistogram()
          .Name("gpu_topology_extender_http_request_duration_seconds")
          .Help("Time from a complete request body to the answer, by extender verb.")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& filterNodes =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_filter_nodes_total")
          .Help("Per-node filter verdicts: fit, unschedulable (preemption may help), unresolvable.")
          .Register(*registry);
  prometheus::Counter& topologyErrors =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_node_topology_errors_total")
          .Help("Nodes whose topology labels were malformed (topology treated as unknown).")
          .Register(*registry)
          .Add({});
  prometheus::Family<prometheus::Counter>& policyReloads =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_policy_reloads_total")
          .Help("Policy file loads, by result; on error the last good policy stays active.")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& policyInfo =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_policy_info")
          .Help("1 for the hash of the active policy.")
          .Register(*registry);
  prometheus::Counter& snapshotBuilds =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_snapshot_builds_total")
          .Help("Cluster snapshots published after node, pod or policy changes.")
          .Register(*registry)
          .Add({});
  // From 100 µs (one changed node of a small cluster) to 2.5 s (a policy change re-deriving every
  // node of a large one).
  prometheus::Histogram& snapshotBuildSeconds =
      prometheus::BuildHistogram()
          .Name("gpu_topology_extender_snapshot_build_duration_seconds")
          .Help(
              "Time to build and publish one cluster snapshot (changed nodes re-derived), taken "
              "under the cache's writer lock.")
          .Register(*registry)
          .Add({}, prometheus::Histogram::BucketBoundaries{0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                           0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                           1, 2.5});
  prometheus::Gauge& malformedNodes =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_nodes_topology_malformed")
          .Help("Nodes in the cluster cache whose topology labels are malformed now.")
          .Register(*registry)
          .Add({});
  prometheus::Family<prometheus::Gauge>& cached =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_cache_objects")
          .Help("Objects in the extender's cluster cache, by kind.")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& binds = prometheus::BuildCounter()
                                                       .Name("gpu_topology_extender_binds_total")
                                                       .Help("Bind verb outcomes.")
                                                       .Register(*registry);
  prometheus::Family<prometheus::Counter>& bindsAbandoned =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_binds_abandoned_total")
          .Help(
              "Binds dropped before the Binding was sent, their GPUs released: the caller closed "
              "the connection (caller_gone), the bind waited past --bind-deadline (deadline), or "
              "this replica is not the leader (not_leader: a standby, or a leader that can no "
              "longer prove it holds its lease).")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& bindsInFlight =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_binds_in_flight")
          .Help(
              "Binds holding one of --bind-concurrency slots (sending) and binds waiting for one "
              "(waiting), sampled with the cache gauges.")
          .Register(*registry);
  prometheus::Gauge& leader =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_leader")
          .Help(
              "1 while this replica answers binds: no leader election, or it leads and its "
              "takeover list is in; 0 on a standby.")
          .Register(*registry)
          .Add({});
  prometheus::Counter& leaderTransitions =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_leader_transitions_total")
          .Help("Times this replica started leading (each begins a takeover).")
          .Register(*registry)
          .Add({});
  prometheus::Family<prometheus::Gauge>& leaseRenewAge =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_lease_renew_age_seconds")
          .Help(
              "Seconds since this replica saw the lease's record change (the holder's last renew "
              "as seen here); exported with leader election only.")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& takeover =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_takeover_duration_seconds")
          .Help(
              "How long this replica's last takeover took, from leading to its fresh pod list "
              "being in; exported once a takeover happened.")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& rejected =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_rejected_requests_total")
          .Help("Requests refused before a decision, by reason.")
          .Register(*registry);

  prometheus::Family<prometheus::Gauge>& buildInfo =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_build_info")
          .Help("1, labelled with the running version and git revision.")
          .Register(*registry);
  prometheus::Gauge& cacheSynced =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_cache_synced")
          .Help(
              "1 once the cluster cache has its first full list of nodes and pods; until then "
              "filter answers an error.")
          .Register(*registry)
          .Add({});
  prometheus::Family<prometheus::Counter>& watchLists =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_watch_lists_total")
          .Help(
              "Completed full lists per watched resource; more than one means re-lists (410 Gone "
              "or a failed watch).")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& watchFailures =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_watch_failures_total")
          .Help("Failed list or watch attempts per watched resource, each retried after a backoff.")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& watchSkipped =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_watch_skipped_objects_total")
          .Help(
              "List items and watch events skipped per watched resource because the object did "
              "not read or was refused (each logged with the reason).")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& watchServed =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_watch_served")
          .Help(
              "1 while the API server serves the resource and it is watched, 0 while discovery "
              "says it does not (an older Kubernetes; the features that need it are off).")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& draPassThrough =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_dra_passthrough_total")
          .Help(
              "Filter calls for pods whose DRA demand the extender passed through uninterpreted "
              "(every node fits, no score), by reason.")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& draBindPredictions =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_dra_bind_predictions_total")
          .Help(
              "Claim pods at their first bind: the devices kube-scheduler allocated to their "
              "claims "
              "against the extender's first-fit prediction for that node (match, mismatch; unknown "
              "when the cache had not seen the allocation yet).")
          .Register(*registry);
  prometheus::Gauge& labelAgeMax =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_node_label_age_max_seconds")
          .Help("Age of the oldest node's gen label (the node agent's last write); 0 when none.")
          .Register(*registry)
          .Add({});
  prometheus::Family<prometheus::Histogram>& labelAge =
      prometheus::BuildHistogram()
          .Name("gpu_topology_extender_node_label_age_seconds")
          .Help(
              "Age of each node's gen label now, one observation per node, replaced at every "
              "observation (use histogram_quantile without rate()).")
          .Register(*registry);
  prometheus::Family<prometheus::Histogram>& regret =
      prometheus::BuildHistogram()
          .Name("gpu_topology_extender_placement_regret_ratio")
          .Help(
              "Per GPU pod of 2 or more GPUs seen bound: 1 - the bandwidth estimate of the set it "
              "got / the best any node offered a pod of its size when it was decided (0 best).")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& belowBestClass =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_placement_below_best_class_total")
          .Help(
              "GPU pods bound with a weaker link class than the best any node offered, by size "
              "and reason: no_better_fit, policy_tradeoff, scheduler_override, avoided_degraded.")
          .Register(*registry);
  prometheus::Family<prometheus::Counter>& unmeasured =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_placement_unmeasured_total")
          .Help(
              "GPU pods of 2 or more GPUs seen bound whose regret could not be measured: no "
              "prioritize decision kept for them, or their GPUs or links unknown.")
          .Register(*registry);
  prometheus::Gauge& decisionsTracked =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_placement_decisions")
          .Help("Prioritize decisions kept for placement regret and explain (bounded).")
          .Register(*registry)
          .Add({});
  prometheus::Gauge& decisionsBytes =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_placement_decisions_bytes")
          .Help("Heap bytes the kept decisions hold (entries, names, index).")
          .Register(*registry)
          .Add({});
  prometheus::Family<prometheus::Gauge>& hostablePods =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_fragmentation_hostable_pods")
          .Help(
              "k-GPU pods of each node's best link class for k that the free GPUs can still host "
              "(disjoint sets), per pool.")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& packedPods =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_fragmentation_packed_pods")
          .Help(
              "k-GPU pods the same free GPUs (of nodes that could host k) would host if packed, "
              "per pool; minus hostable_pods it is the pool's fragmentation debt.")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& nvlinkSetsGauge =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_fragmentation_nvlink_sets")
          .Help("Disjoint all-NVLink sets of k free GPUs, per pool.")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& strandedGpus =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_fragmentation_stranded_gpus")
          .Help(
              "Free GPUs in no all-NVLink set of k free GPUs, on nodes that have such sets when "
              "empty, per pool.")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& strandedMig =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_fragmentation_stranded_mig_slices")
          .Help(
              "Unpartitioned MIG memory slices no legal placement of a profile in use on the node "
              "can take, per pool.")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& expectedUnusable =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_fragmentation_expected_gpus")
          .Help(
              "FGD-style expected fragmentation: free GPUs a request of 1, 2, 4 or 8 GPUs (equal "
              "shares) could not use as well as on the empty node, per pool.")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& poolFreeGpus =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_fragmentation_free_gpus")
          .Help("Free whole GPUs per pool (the denominator of the fragmentation figures).")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& sharedGpusGauge =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_shared_gpus")
          .Help("Usable GPUs the device plugin shares among pods (time-slicing, MPS), per pool.")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& sharedReplicas =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_shared_replicas")
          .Help(
              "Replicas of shared GPUs pods hold (state=used, the agent's tenant count) and that "
              "are left (state=free), per pool.")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& sharedMigReplicas =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_shared_mig_replicas")
          .Help(
              "Replicas of shared MIG devices pods hold (state=used) and that are left "
              "(state=free), per pool.")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& sharedTenants =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_shared_gpu_tenants")
          .Help(
              "Tenants (replicas held by pods) of the shared GPU at a quantile of the pool's "
              "shared GPUs: stat p50, p95 and max (the busiest).")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& markedGpus =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_marked_gpus")
          .Help(
              "GPUs the node agent marks, per pool: state=failed (never allocated), degraded "
              "(avoided by multi-GPU sets), cordoned (by an operator).")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& markedLinks =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_marked_nvlink_pairs")
          .Help(
              "GPU pairs whose NVLinks the node agent marks, per pool: state=degraded (error or "
              "recovery rate over its threshold), down (fewer active links than the board has), "
              "cordoned (by an operator).")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& degradedInUse =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_degraded_in_use")
          .Help(
              "Degraded hardware pods hold, per pool: kind=gpus (degraded GPUs taken), "
              "nvlink_pairs (degraded or down pairs with both GPUs taken).")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& pendingPods =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_cache_pending_gpu_pods")
          .Help("GPU pods in the cache neither bound nor nominated, by whole GPUs requested.")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& freeGpus =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_free_gpus")
          .Help(
              "Free whole GPUs by the size of the largest all-NVLink set of free GPUs each "
              "belongs to (unknown: links not labelled).")
          .Register(*registry);

  prometheus::Family<prometheus::Counter>& groupDecisions =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_group_decisions_total")
          .Help(
              "What pod-group members' filters decided about their group: planned (a plan "
              "committed), no_room / never_fits (a required level cannot hold it: refused), "
              "unplaced, unsupported, size_unknown (placed pod by pod), stale (planned again).")
          .Register(*registry);
  prometheus::Histogram& groupPlanning =
      prometheus::BuildHistogram()
          .Name("gpu_topology_extender_group_planning_duration_seconds")
          .Help("Time a group's first member's filter spent planning the group and committing it.")
          .Register(*registry)
          .Add({}, prometheus::Histogram::BucketBoundaries{0.00005, 0.0001, 0.00025, 0.0005, 0.001,
                                                           0.0025, 0.005, 0.01, 0.025, 0.1});
  prometheus::Family<prometheus::Counter>& groupsPlaced =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_groups_placed_total")
          .Help(
              "Planned groups whose last member bound, per topology level of the policy: whole "
              "(every member in one domain of the level) or split.")
          .Register(*registry);
  prometheus::Histogram& groupFirstToLast =
      prometheus::BuildHistogram()
          .Name("gpu_topology_extender_group_first_to_last_bound_seconds")
          .Help("Time from a planned group's first member bound to its last.")
          .Register(*registry)
          .Add({}, prometheus::Histogram::BucketBoundaries{0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120,
                                                           300, 900, 3600});
  prometheus::Family<prometheus::Counter>& holdsReleased =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_group_holds_released_total")
          .Help(
              "Held slots of planned groups that stopped being held, by reason: claimed (a member "
              "bound), deleted, expired (hold TTL), displaced, surplus, policy.")
          .Register(*registry);
  prometheus::Family<prometheus::Gauge>& groupHolds =
      prometheus::BuildGauge()
          .Name("gpu_topology_extender_group_holds")
          .Help("Slots held for planned groups now (kind=slots), and groups holding any (groups).")
          .Register(*registry);

  // Label sets resolved once; [verb][code] with a trailing "other" code.
  std::array<std::array<prometheus::Counter*, kCodes.size() + 1>, kVerbNames.size()> requestBy{};
  std::array<prometheus::Histogram*, kVerbNames.size()> latencyBy{};
  std::array<prometheus::Counter*, 3> filterBy{};
  std::array<prometheus::Counter*, 2> reloadBy{};
  std::array<prometheus::Counter*, 2> bindBy{};
  std::array<prometheus::Counter*, 3> abandonedBy{};
  std::once_flag leaseRenewAgeAdded;
  prometheus::Gauge* leaseRenewAgeNow = nullptr;
  std::once_flag takeoverAdded;
  prometheus::Gauge* takeoverLast = nullptr;
  prometheus::Gauge* bindsSending = nullptr;
  prometheus::Gauge* bindsWaiting = nullptr;
  std::array<prometheus::Counter*, kRejectReasons.size()> rejectedBy{};
  prometheus::Gauge* nodesGauge = nullptr;
  prometheus::Gauge* podsGauge = nullptr;
  prometheus::Gauge* reservationsGauge = nullptr;
  std::array<prometheus::Counter*, kResourceNames.size()> watchListsBy{};
  std::array<prometheus::Counter*, kResourceNames.size()> watchFailuresBy{};
  std::array<prometheus::Counter*, kResourceNames.size()> watchSkippedBy{};
  DeclaredCounters draPassThroughBy{draPassThrough, "reason"};
  DeclaredCounters draBindBy{draBindPredictions, "result"};
  prometheus::Gauge* slicesGauge = nullptr;
  prometheus::Gauge* classesGauge = nullptr;
  prometheus::Gauge* claimsGauge = nullptr;
  prometheus::Gauge* taintRulesGauge = nullptr;
  Mutex labelAgeMutex;  // guards the replacement of the single label-age histogram
  prometheus::Histogram* labelAgeNow GTE_GUARDED_BY(labelAgeMutex) = nullptr;
  std::array<prometheus::Gauge*, kSetClassNames.size()> freeGpusBy{};
  DeclaredCounters groupDecisionBy{groupDecisions, "outcome"};
  DeclaredCounters holdsReleasedBy{holdsReleased, "reason"};
  prometheus::Gauge* heldSlots = nullptr;
  prometheus::Gauge* holdingGroups = nullptr;
  std::array<prometheus::Histogram*, kRegretSizes.size()> regretBy{};
  std::array<std::array<prometheus::Counter*, kPlacementReasons.size()>, kRegretSizes.size()>
      belowBestClassBy{};
  std::array<prometheus::Counter*, kUnmeasuredReasons.size()> unmeasuredBy{};
  std::array<prometheus::Gauge*, kPendingSizes.size()> pendingBy{};

  // One pool's series, created when the pool first appears and removed when it goes.
  struct PoolSeries {
    std::array<prometheus::Gauge*, kFragmentationGaugeSizes.size()> hostable{};
    std::array<prometheus::Gauge*, kFragmentationGaugeSizes.size()> packed{};
    std::array<prometheus::Gauge*, kFragmentationGaugeSizes.size()> nvlinkSets{};  // [0] unused
    std::array<prometheus::Gauge*, kFragmentationGaugeSizes.size()> stranded{};    // [0] unused
    prometheus::Gauge* strandedMig = nullptr;
    prometheus::Gauge* expected = nullptr;
    prometheus::Gauge* free = nullptr;
    prometheus::Gauge* sharedGpus = nullptr;
    prometheus::Gauge* sharedUsed = nullptr;
    prometheus::Gauge* sharedFree = nullptr;
    prometheus::Gauge* sharedMigUsed = nullptr;
    prometheus::Gauge* sharedMigFree = nullptr;
    std::array<prometheus::Gauge*, kSharedTenantQuantiles.size()> tenants{};
    std::array<prometheus::Gauge*, 3> gpus{};   // failed, degraded, cordoned
    std::array<prometheus::Gauge*, 3> links{};  // degraded, down, cordoned
    std::array<prometheus::Gauge*, 2> inUse{};  // gpus, nvlink_pairs
  };
  Mutex poolsMutex;  // guards the pool series
  std::map<std::string, PoolSeries> pools GTE_GUARDED_BY(poolsMutex);

  PoolSeries addPool(const std::string& pool) {
    PoolSeries series;
    for (std::size_t i = 0; i < kFragmentationGaugeSizes.size(); ++i) {
      const std::string k = std::to_string(kFragmentationGaugeSizes[i]);
      series.hostable[i] = &hostablePods.Add({{"pool", pool}, {"k", k}});
      series.packed[i] = &packedPods.Add({{"pool", pool}, {"k", k}});
      if (kFragmentationGaugeSizes[i] >= 2) {
        series.nvlinkSets[i] = &nvlinkSetsGauge.Add({{"pool", pool}, {"k", k}});
        series.stranded[i] = &strandedGpus.Add({{"pool", pool}, {"k", k}});
      }
    }
    series.strandedMig = &strandedMig.Add({{"pool", pool}});
    series.expected = &expectedUnusable.Add({{"pool", pool}});
    series.free = &poolFreeGpus.Add({{"pool", pool}});
    series.sharedGpus = &sharedGpusGauge.Add({{"pool", pool}});
    series.sharedUsed = &sharedReplicas.Add({{"pool", pool}, {"state", "used"}});
    series.sharedFree = &sharedReplicas.Add({{"pool", pool}, {"state", "free"}});
    series.sharedMigUsed = &sharedMigReplicas.Add({{"pool", pool}, {"state", "used"}});
    series.sharedMigFree = &sharedMigReplicas.Add({{"pool", pool}, {"state", "free"}});
    for (std::size_t q = 0; q < kSharedTenantQuantiles.size(); ++q) {
      series.tenants[q] =
          &sharedTenants.Add({{"pool", pool}, {"stat", std::string(kSharedTenantQuantiles[q])}});
    }
    const std::array<const char*, 3> gpuStates = {"failed", "degraded", "cordoned"};
    const std::array<const char*, 3> linkStates = {"degraded", "down", "cordoned"};
    const std::array<const char*, 2> kinds = {"gpus", "nvlink_pairs"};
    for (std::size_t i = 0; i < gpuStates.size(); ++i)
      series.gpus[i] = &markedGpus.Add({{"pool", pool}, {"state", gpuStates[i]}});
    for (std::size_t i = 0; i < linkStates.size(); ++i)
      series.links[i] = &markedLinks.Add({{"pool", pool}, {"state", linkStates[i]}});
    for (std::size_t i = 0; i < kinds.size(); ++i)
      series.inUse[i] = &degradedInUse.Add({{"pool", pool}, {"kind", kinds[i]}});
    return series;
  }

  void removePool(const PoolSeries& series) {
    for (std::size_t i = 0; i < kFragmentationGaugeSizes.size(); ++i) {
      hostablePods.Remove(series.hostable[i]);
      packedPods.Remove(series.packed[i]);
      if (series.nvlinkSets[i] != nullptr) nvlinkSetsGauge.Remove(series.nvlinkSets[i]);
      if (series.stranded[i] != nullptr) strandedGpus.Remove(series.stranded[i]);
    }
    strandedMig.Remove(series.strandedMig);
    expectedUnusable.Remove(series.expected);
    poolFreeGpus.Remove(series.free);
    sharedGpusGauge.Remove(series.sharedGpus);
    sharedReplicas.Remove(series.sharedUsed);
    sharedReplicas.Remove(series.sharedFree);
    sharedMigReplicas.Remove(series.sharedMigUsed);
    sharedMigReplicas.Remove(series.sharedMigFree);
    for (prometheus::Gauge* gauge : series.tenants)
      sharedTenants.Remove(gauge);
    for (prometheus::Gauge* gauge : series.gpus)
      markedGpus.Remove(gauge);
    for (prometheus::Gauge* gauge : series.links)
      markedLinks.Remove(gauge);
    for (prometheus::Gauge* gauge : series.inUse)
      degradedInUse.Remove(gauge);
  }

  Mutex policyMutex;  // guards the single policy_info series
  prometheus::Gauge* policyGauge GTE_GUARDED_BY(policyMutex) = nullptr;

  Impl() {
    const prometheus::Histogram::BucketBoundaries buckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                             0.005,  0.01,    0.025,  0.05,  0.1,
                                                             0.25,   0.5,     1,      2.5,   5};
    for (std::size_t v = 0; v < kVerbNames.size(); ++v) {
      for (std::size_t c = 0; c < kCodes.size(); ++c) {
        requestBy[v][c] =
            &requests.Add({{"verb", kVerbNames[v]}, {"code", std::to_string(kCodes[c])}});
      }
      requestBy[v][kCodes.size()] = &requests.Add({{"verb", kVerbNames[v]}, {"code", "other"}});
      latencyBy[v] = &latency.Add({{"verb", kVerbNames[v]}}, buckets);
    }
    filterBy = {&filterNodes.Add({{"outcome", "fit"}}),
                &filterNodes.Add({{"outcome", "unschedulable"}}),
                &filterNodes.Add({{"outcome", "unresolvable"}})};
    reloadBy = {&policyReloads.Add({{"result", "ok"}}), &policyReloads.Add({{"result", "error"}})};
    bindBy = {&binds.Add({{"result", "ok"}}), &binds.Add({{"result", "error"}})};
    abandonedBy = {&bindsAbandoned.Add({{"reason", "caller_gone"}}),
                   &bindsAbandoned.Add({{"reason", "deadline"}}),
                   &bindsAbandoned.Add({{"reason", "not_leader"}})};
    bindsSending = &bindsInFlight.Add({{"state", "sending"}});
    bindsWaiting = &bindsInFlight.Add({{"state", "waiting"}});
    for (std::size_t i = 0; i < kRejectReasons.size(); ++i) {
      rejectedBy[i] = &rejected.Add({{"reason", kRejectReasons[i]}});
    }
    nodesGauge = &cached.Add({{"kind", "node"}});
    podsGauge = &cached.Add({{"kind", "pod"}});
    reservationsGauge = &cached.Add({{"kind", "reservation"}});
    for (std::size_t i = 0; i < kResourceNames.size(); ++i) {
      watchListsBy[i] = &watchLists.Add({{"resource", kResourceNames[i]}});
      watchFailuresBy[i] = &watchFailures.Add({{"resource", kResourceNames[i]}});
      watchSkippedBy[i] = &watchSkipped.Add({{"resource", kResourceNames[i]}});
    }
    slicesGauge = &cached.Add({{"kind", "resourceslice"}});
    classesGauge = &cached.Add({{"kind", "deviceclass"}});
    claimsGauge = &cached.Add({{"kind", "resourceclaim"}});
    taintRulesGauge = &cached.Add({{"kind", "devicetaintrule"}});
    labelAgeNow = &labelAge.Add({}, labelAgeBuckets());
    for (std::size_t i = 0; i < kSetClassNames.size(); ++i) {
      freeGpusBy[i] = &freeGpus.Add({{"nvlink_set", kSetClassNames[i]}});
    }
    heldSlots = &groupHolds.Add({{"kind", "slots"}});
    holdingGroups = &groupHolds.Add({{"kind", "groups"}});
    const prometheus::Histogram::BucketBoundaries regretBuckets = {0, 0.1, 0.25, 0.5, 0.75, 0.9, 1};
    for (std::size_t k = 0; k < kRegretSizes.size(); ++k) {
      regretBy[k] = &regret.Add({{"k", kRegretSizes[k]}}, regretBuckets);
      for (std::size_t r = 0; r < kPlacementReasons.size(); ++r) {
        belowBestClassBy[k][r] =
            &belowBestClass.Add({{"k", kRegretSizes[k]}, {"reason", kPlacementReasons[r]}});
      }
    }
    for (std::size_t r = 0; r < kUnmeasuredReasons.size(); ++r) {
      unmeasuredBy[r] = &unmeasured.Add({{"reason", kUnmeasuredReasons[r]}});
    }
    for (std::size_t k = 0; k < kPendingSizes.size(); ++k) {
      pendingBy[k] = &pendingPods.Add({{"k", kPendingSizes[k]}});
    }
  }

  prometheus::Counter& placed(std::string_view level, bool whole) {
    // Family::Add returns the existing series for known labels (and is thread-safe).
    return groupsPlaced.Add(
        {{"level", std::string(level)}, {"placement", whole ? "whole" : "split"}});
  }
};

Metrics::Metrics() : impl_(std::make_unique<Impl>()) {}
Metrics::~Metrics() = default;

void Metrics::observeRequest(wire::Verb verb, int httpStatus, double seconds) {
  const std::size_t v = verbIndex(verb);
  impl_->requestBy[v][codeIndex(httpStatus)]->Increment();
  impl_->latencyBy[v]->Observe(seconds);
}

void Metrics::observeUnknownPath(int httpStatus) {
  impl_->requestBy[kOtherVerb][codeIndex(httpStatus)]->Increment();
  impl_->latencyBy[kOtherVerb]->Observe(0);
}

void Metrics::countFilterNodes(NodeOutcome outcome, std::uint64_t n) {
  if (n > 0) impl_->filterBy[static_cast<std::size_t>(outcome)]->Increment(static_cast<double>(n));
}

void Metrics::countNodeTopologyError() {
  impl_->topologyErrors.Increment();
}

void Metrics::countPolicyReload(ReloadResult result) {
  impl_->reloadBy[static_cast<std::size_t>(result)]->Increment();
}

void Metrics::setPolicyHash(std::string_view hash) {
  MutexLock lock(impl_->policyMutex);
  if (impl_->policyGauge) impl_->policyInfo.Remove(impl_->policyGauge);
  impl_->policyGauge = &impl_->policyInfo.Add({{"hash", std::string(hash)}});
  impl_->policyGauge->Set(1);
}

void Metrics::countSnapshotBuilds(std::uint64_t n) {
  if (n > 0) impl_->snapshotBuilds.Increment(static_cast<double>(n));
}

void Metrics::observeSnapshotBuild(double seconds) {
  impl_->snapshotBuildSeconds.Observe(seconds);
}

void Metrics::setMalformedNodes(std::int64_t n) {
  impl_->malformedNodes.Set(static_cast<double>(n));
}

void Metrics::setCachedObjects(std::int64_t nodes, std::int64_t pods, std::int64_t reservations) {
  impl_->nodesGauge->Set(static_cast<double>(nodes));
  impl_->podsGauge->Set(static_cast<double>(pods));
  impl_->reservationsGauge->Set(static_cast<double>(reservations));
}

void Metrics::countBind(bool ok) {
  impl_->bindBy[ok ? 0 : 1]->Increment();
}

void Metrics::countBindAbandoned(BindAbandonReason reason) {
  impl_->abandonedBy[static_cast<std::size_t>(reason)]->Increment();
}

void Metrics::setLeader(bool leader) {
  impl_->leader.Set(leader ? 1.0 : 0.0);
}

void Metrics::countLeaderTransitions(std::uint64_t n) {
  if (n > 0) impl_->leaderTransitions.Increment(static_cast<double>(n));
}

void Metrics::setLeaseRenewAge(double seconds) {
  std::call_once(impl_->leaseRenewAgeAdded,
                 [this] { impl_->leaseRenewAgeNow = &impl_->leaseRenewAge.Add({}); });
  impl_->leaseRenewAgeNow->Set(seconds);
}

void Metrics::setLastTakeover(double seconds) {
  std::call_once(impl_->takeoverAdded, [this] { impl_->takeoverLast = &impl_->takeover.Add({}); });
  impl_->takeoverLast->Set(seconds);
}

void Metrics::setBindsInFlight(std::int64_t sending, std::int64_t waiting) {
  impl_->bindsSending->Set(static_cast<double>(sending));
  impl_->bindsWaiting->Set(static_cast<double>(waiting));
}

void Metrics::countRejectedRequest(std::string_view reason) {
  for (std::size_t i = 0; i < kRejectReasons.size(); ++i) {
    if (reason == kRejectReasons[i]) {
      impl_->rejectedBy[i]->Increment();
      return;
    }
  }
  impl_->rejectedBy.back()->Increment();
}

void Metrics::setBuildInfo(std::string_view version, std::string_view revision) {
  impl_->buildInfo.Add({{"version", std::string(version)}, {"revision", std::string(revision)}})
      .Set(1);
}

void Metrics::setCacheSynced(bool synced) {
  impl_->cacheSynced.Set(synced ? 1 : 0);
}

void Metrics::countWatchLists(WatchedResource resource, std::uint64_t n) {
  if (n > 0) {
    impl_->watchListsBy[static_cast<std::size_t>(resource)]->Increment(static_cast<double>(n));
  }
}

void Metrics::countWatchFailures(WatchedResource resource, std::uint64_t n) {
  if (n > 0) {
    impl_->watchFailuresBy[static_cast<std::size_t>(resource)]->Increment(static_cast<double>(n));
  }
}

void Metrics::countWatchSkipped(WatchedResource resource, std::uint64_t n) {
  if (n > 0) {
    impl_->watchSkippedBy[static_cast<std::size_t>(resource)]->Increment(static_cast<double>(n));
  }
}

void Metrics::setWatchServed(WatchedResource resource, bool served) {
  // Added on first use (prometheus-cpp's Add returns the existing series after that): a resource
  // discovery has not answered for is not exported at all.
  impl_->watchServed.Add({{"resource", kResourceNames[static_cast<std::size_t>(resource)]}})
      .Set(served ? 1 : 0);
}

void Metrics::setCachedDraObjects(std::int64_t slices, std::int64_t classes, std::int64_t claims,
                                  std::int64_t taintRules) {
  impl_->slicesGauge->Set(static_cast<double>(slices));
  impl_->classesGauge->Set(static_cast<double>(classes));
  impl_->claimsGauge->Set(static_cast<double>(claims));
  impl_->taintRulesGauge->Set(static_cast<double>(taintRules));
}

void Metrics::countDraPassThrough(std::string_view reason) {
  impl_->draPassThroughBy.count(reason, 1);
}

void Metrics::declareDraPassThroughReasons(const std::vector<std::string_view>& reasons) {
  impl_->draPassThroughBy.declare(reasons);
}

void Metrics::countDraBindPrediction(std::string_view result) {
  impl_->draBindBy.count(result, 1);
}

void Metrics::declareDraBindResults(const std::vector<std::string_view>& results) {
  impl_->draBindBy.declare(results);
}

void Metrics::setNodeLabelAges(const LabelAges& ages) {
  impl_->labelAgeMax.Set(static_cast<double>(ages.maxSeconds));
  // A distribution of the cluster now, not of events: a fresh histogram holds this observation.
  std::vector<double> increments(ages.perBucket.begin(), ages.perBucket.end());
  MutexLock lock(impl_->labelAgeMutex);
  impl_->labelAge.Remove(impl_->labelAgeNow);
  impl_->labelAgeNow = &impl_->labelAge.Add({}, labelAgeBuckets());
  impl_->labelAgeNow->ObserveMultiple(increments, ages.sumSeconds);
}

void Metrics::setFreeGpusByNvlinkSet(const FreeGpusByNvlinkSet& counts) {
  for (std::size_t i = 0; i < counts.size(); ++i) {
    impl_->freeGpusBy[i]->Set(static_cast<double>(counts[i]));
  }
}

void Metrics::countGroupDecision(std::string_view outcome) {
  impl_->groupDecisionBy.count(outcome, 1);
}

void Metrics::declareGroupDecisionOutcomes(const std::vector<std::string_view>& outcomes) {
  impl_->groupDecisionBy.declare(outcomes);
}

void Metrics::observeGroupPlanning(double seconds) {
  impl_->groupPlanning.Observe(seconds);
}

void Metrics::setGroupLevels(const std::vector<std::string>& labels) {
  for (const std::string& level : labels) {
    impl_->placed(level, true);
    impl_->placed(level, false);
  }
}

void Metrics::countGroupPlaced(std::string_view level, bool whole) {
  impl_->placed(level, whole).Increment();
}

void Metrics::observeGroupFirstToLast(double seconds) {
  impl_->groupFirstToLast.Observe(seconds);
}

void Metrics::countHoldsReleased(std::string_view reason, std::uint64_t n) {
  impl_->holdsReleasedBy.count(reason, static_cast<double>(n));
}

void Metrics::declareHoldReleaseReasons(const std::vector<std::string_view>& reasons) {
  impl_->holdsReleasedBy.declare(reasons);
}

void Metrics::setGroupHolds(std::int64_t slots, std::int64_t groups) {
  impl_->heldSlots->Set(static_cast<double>(slots));
  impl_->holdingGroups->Set(static_cast<double>(groups));
}

void Metrics::setFragmentation(const std::vector<PoolFragmentation>& pools) {
  const auto set = [](prometheus::Gauge* gauge, auto value) {
    if (gauge != nullptr) gauge->Set(static_cast<double>(value));
  };
  MutexLock lock(impl_->poolsMutex);
  std::map<std::string, Impl::PoolSeries> now;
  for (const PoolFragmentation& pool : pools) {
    auto known = impl_->pools.find(pool.pool);
    Impl::PoolSeries series;
    if (known != impl_->pools.end()) {
      series = known->second;
      impl_->pools.erase(known);
    } else {
      series = impl_->addPool(pool.pool);
    }
    for (std::size_t i = 0; i < kFragmentationGaugeSizes.size(); ++i) {
      set(series.hostable[i], pool.hostable[i]);
      set(series.packed[i], pool.packed[i]);
      set(series.nvlinkSets[i], pool.nvlinkSets[i]);
      set(series.stranded[i], pool.stranded[i]);
    }
    set(series.strandedMig, pool.strandedMigSlices);
    set(series.expected, pool.expectedUnusableGpus);
    set(series.free, pool.freeGpus);
    set(series.sharedGpus, pool.sharedGpus);
    set(series.sharedUsed, pool.sharedReplicasUsed);
    set(series.sharedFree, pool.sharedReplicasFree);
    set(series.sharedMigUsed, pool.sharedMigReplicasUsed);
    set(series.sharedMigFree, pool.sharedMigReplicasFree);
    for (std::size_t q = 0; q < kSharedTenantQuantiles.size(); ++q)
      set(series.tenants[q], pool.sharedTenants[q]);
    set(series.gpus[0], pool.failedGpus);
    set(series.gpus[1], pool.degradedGpus);
    set(series.gpus[2], pool.cordonedGpus);
    set(series.links[0], pool.degradedLinks);
    set(series.links[1], pool.downLinks);
    set(series.links[2], pool.cordonedLinks);
    set(series.inUse[0], pool.degradedGpusInUse);
    set(series.inUse[1], pool.degradedLinksInUse);
    now.emplace(pool.pool, series);
  }
  for (const auto& [name, gone] : impl_->pools)
    impl_->removePool(gone);
  impl_->pools = std::move(now);
}

void Metrics::setPendingGpuPods(const PendingGpuPods& pods) {
  for (std::size_t k = 0; k < pods.size(); ++k) {
    impl_->pendingBy[k]->Set(static_cast<double>(pods[k]));
  }
}

void Metrics::observePlacementRegret(std::int64_t gpus, double ratio) {
  impl_->regretBy[regretSizeIndex(gpus)]->Observe(ratio);
}

void Metrics::countPlacementBelowBestClass(std::int64_t gpus, PlacementReason reason) {
  impl_->belowBestClassBy[regretSizeIndex(gpus)][static_cast<std::size_t>(reason)]->Increment();
}

void Metrics::countPlacementUnmeasured(UnmeasuredReason reason) {
  impl_->unmeasuredBy[static_cast<std::size_t>(reason)]->Increment();
}

void Metrics::setPlacementDecisions(std::int64_t tracked, std::int64_t bytes) {
  impl_->decisionsTracked.Set(static_cast<double>(tracked));
  impl_->decisionsBytes.Set(static_cast<double>(bytes));
}

std::string Metrics::serialize() const {
  // The series replaced as a whole (the label-age histogram, the policy hash, the pools'
  // fragmentation series) are removed and added again under these locks: a scrape taken under
  // them never falls between the two and misses a series. Taken in this order; nothing else
  // holds two of them, so the fixed order cannot deadlock.
  const MutexLock labelAgeLock(impl_->labelAgeMutex);
  const MutexLock policyLock(impl_->policyMutex);
  const MutexLock poolsLock(impl_->poolsMutex);
  const auto families = impl_->registry->Collect();
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace gte::metrics
