// The exposition a Prometheus scrape sees: every family is there from the start (so dashboards
// and alerts have a series before the first event), counters move by what was counted, labels stay
// within their fixed sets.
#include "metrics/metrics.h"

#include <catch2/catch_test_macros.hpp>
#include <string>

namespace gte::metrics {
namespace {

bool has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

}  // namespace

TEST_CASE("metrics: every family is exposed at zero before any event") {
  Metrics m;
  const std::string text = m.serialize();
  CHECK(has(text, R"(gpu_topology_extender_http_requests_total{code="200",verb="filter"} 0)"));
  CHECK(has(text, R"(gpu_topology_extender_filter_nodes_total{outcome="unresolvable"} 0)"));
  CHECK(has(text, R"(gpu_topology_extender_binds_total{result="error"} 0)"));
  CHECK(has(text, R"(gpu_topology_extender_binds_abandoned_total{reason="caller_gone"} 0)"));
  CHECK(has(text, R"(gpu_topology_extender_cache_objects{kind="reservation"} 0)"));
  CHECK(has(text, "gpu_topology_extender_snapshot_builds_total 0"));
}

TEST_CASE("metrics: requests are counted by verb and status, unknown statuses as other") {
  Metrics m;
  m.observeRequest(wire::Verb::kFilter, 200, 0.001);
  m.observeRequest(wire::Verb::kFilter, 200, 0.002);
  m.observeRequest(wire::Verb::kPrioritize, 503, 0.001);
  m.observeRequest(wire::Verb::kBind, 418, 0.001);
  m.observeRequest(wire::Verb::kExplain, 200, 0.001);
  m.observeUnknownPath(404);
  const std::string text = m.serialize();
  // Explain and paths that are no endpoint share the "other" verb label.
  CHECK(has(text, R"(gpu_topology_extender_http_requests_total{code="200",verb="other"} 1)"));
  CHECK(has(text, R"(gpu_topology_extender_http_requests_total{code="404",verb="other"} 1)"));
  CHECK(has(text, R"(gpu_topology_extender_http_requests_total{code="200",verb="filter"} 2)"));
  CHECK(has(text, R"(gpu_topology_extender_http_requests_total{code="503",verb="prioritize"} 1)"));
  CHECK(has(text, R"(gpu_topology_extender_http_requests_total{code="other",verb="bind"} 1)"));
  CHECK_FALSE(has(text, R"(code="418")"));
  CHECK(has(text, R"(gpu_topology_extender_http_request_duration_seconds_count{verb="filter"} 2)"));
}

TEST_CASE("metrics: filter verdicts, binds and rejections add up") {
  Metrics m;
  m.countFilterNodes(NodeOutcome::kFit, 3);
  m.countFilterNodes(NodeOutcome::kUnschedulable, 0);
  m.countFilterNodes(NodeOutcome::kUnschedulable, 2);
  m.countBind(true);
  m.countBind(false);
  m.countBind(false);
  m.countBindAbandoned(gte::metrics::BindAbandonReason::kDeadline);
  m.countRejectedRequest("malformed_json");
  m.countRejectedRequest("something new");  // not a known reason: counted as other
  const std::string text = m.serialize();
  CHECK(has(text, R"(gpu_topology_extender_filter_nodes_total{outcome="fit"} 3)"));
  CHECK(has(text, R"(gpu_topology_extender_filter_nodes_total{outcome="unschedulable"} 2)"));
  CHECK(has(text, R"(gpu_topology_extender_binds_total{result="ok"} 1)"));
  CHECK(has(text, R"(gpu_topology_extender_binds_total{result="error"} 2)"));
  CHECK(has(text, R"(gpu_topology_extender_binds_abandoned_total{reason="deadline"} 1)"));
  m.setBindsInFlight(3, 7);
  const std::string sampled = m.serialize();
  CHECK(has(sampled, R"(gpu_topology_extender_binds_in_flight{state="sending"} 3)"));
  CHECK(has(sampled, R"(gpu_topology_extender_binds_in_flight{state="waiting"} 7)"));
  CHECK(has(text, R"(gpu_topology_extender_rejected_requests_total{reason="malformed_json"} 1)"));
  CHECK(has(text, R"(gpu_topology_extender_rejected_requests_total{reason="other"} 1)"));
  CHECK_FALSE(has(text, "something new"));
}

TEST_CASE("metrics: the policy info series follows the active policy, one series at a time") {
  Metrics m;
  m.setPolicyHash("aaaa");
  m.setPolicyHash("bbbb");
  const std::string text = m.serialize();
  CHECK(has(text, R"(gpu_topology_extender_policy_info{hash="bbbb"} 1)"));
  CHECK_FALSE(has(text, R"(hash="aaaa")"));
}

TEST_CASE("metrics: cache gauges show the last value set") {
  Metrics m;
  m.setCachedObjects(5, 7, 1);
  m.setCachedObjects(4, 9, 0);
  m.setMalformedNodes(2);
  m.countSnapshotBuilds(3);
  const std::string text = m.serialize();
  CHECK(has(text, R"(gpu_topology_extender_cache_objects{kind="node"} 4)"));
  CHECK(has(text, R"(gpu_topology_extender_cache_objects{kind="pod"} 9)"));
  CHECK(has(text, "gpu_topology_extender_nodes_topology_malformed 2"));
  CHECK(has(text, "gpu_topology_extender_snapshot_builds_total 3"));
}

}  // namespace gte::metrics

namespace gte::metrics {

TEST_CASE("metrics: snapshot build durations land in their buckets") {
  Metrics m;
  m.observeSnapshotBuild(0.0002);
  m.observeSnapshotBuild(0.03);
  const std::string text = m.serialize();
  CHECK(
      has(text, R"(gpu_topology_extender_snapshot_build_duration_seconds_bucket{le="0.0001"} 0)"));
  CHECK(
      has(text, R"(gpu_topology_extender_snapshot_build_duration_seconds_bucket{le="0.00025"} 1)"));
  CHECK(has(text, R"(gpu_topology_extender_snapshot_build_duration_seconds_bucket{le="0.025"} 1)"));
  CHECK(has(text, R"(gpu_topology_extender_snapshot_build_duration_seconds_bucket{le="0.05"} 2)"));
  CHECK(has(text, "gpu_topology_extender_snapshot_build_duration_seconds_count 2"));
}

TEST_CASE("metrics: fragmentation series follow the pools, and go with them") {
  Metrics m;
  PoolFragmentation a;
  a.pool = "a100";
  a.hostable = {8, 4, 2, 1};
  a.packed = {8, 4, 2, 1};
  a.nvlinkSets = {8, 4, 2, 1};
  a.stranded = {0, 0, 0, 3};
  a.strandedMigSlices = 1;
  a.expectedUnusableGpus = 1.5;
  a.freeGpus = 8;
  PoolFragmentation b = a;
  b.pool = "h100";
  b.failedGpus = 1;
  b.degradedGpus = 2;
  b.downLinks = 3;
  b.degradedLinksInUse = 1;
  m.setFragmentation({a, b});
  std::string text = m.serialize();
  // Marked hardware (docs/health.md), per pool and state.
  CHECK(has(text, R"(gpu_topology_extender_marked_gpus{pool="h100",state="failed"} 1)"));
  CHECK(has(text, R"(gpu_topology_extender_marked_gpus{pool="h100",state="degraded"} 2)"));
  CHECK(has(text, R"(gpu_topology_extender_marked_gpus{pool="a100",state="cordoned"} 0)"));
  CHECK(has(text, R"(gpu_topology_extender_marked_nvlink_pairs{pool="h100",state="down"} 3)"));
  CHECK(has(text, R"(gpu_topology_extender_degraded_in_use{kind="nvlink_pairs",pool="h100"} 1)"));
  CHECK(has(text, R"(gpu_topology_extender_fragmentation_hostable_pods{k="8",pool="a100"} 1)"));
  CHECK(has(text, R"(gpu_topology_extender_fragmentation_stranded_gpus{k="8",pool="h100"} 3)"));
  CHECK(has(text, R"(gpu_topology_extender_fragmentation_expected_gpus{pool="a100"} 1.5)"));
  CHECK(has(text, R"(gpu_topology_extender_fragmentation_stranded_mig_slices{pool="a100"} 1)"));
  // k = 1 has no NVLink-set or stranded series: a single GPU is never stranded.
  CHECK_FALSE(has(text, R"(gpu_topology_extender_fragmentation_stranded_gpus{k="1")"));
  // h100 leaves: its series go; a100's stay.
  m.setFragmentation({a});
  text = m.serialize();
  CHECK_FALSE(has(text, R"(pool="h100")"));
  CHECK(has(text, R"(gpu_topology_extender_fragmentation_free_gpus{pool="a100"} 8)"));
}

TEST_CASE("metrics: placement regret and pending pods use their fixed label sets") {
  Metrics m;
  m.observePlacementRegret(3, 0.2);  // sizes other than 2, 4, 8 are "other"
  m.countPlacementBelowBestClass(8, PlacementReason::kSchedulerOverride);
  m.setPendingGpuPods({0, 0, 0, 5, 1});
  const std::string text = m.serialize();
  CHECK(has(text, R"(gpu_topology_extender_placement_regret_ratio_count{k="other"} 1)"));
  CHECK(has(text, R"(gpu_topology_extender_placement_regret_ratio_bucket{k="other",le="0.25"} 1)"));
  CHECK(has(
      text,
      R"(gpu_topology_extender_placement_below_best_class_total{k="8",reason="scheduler_override"} 1)"));
  CHECK(has(text, R"(gpu_topology_extender_cache_pending_gpu_pods{k="8"} 5)"));
  CHECK(has(text, R"(gpu_topology_extender_cache_pending_gpu_pods{k="other"} 1)"));
}

}  // namespace gte::metrics

namespace gte::metrics {

TEST_CASE("metrics: pod-group decisions, holds and placements") {
  Metrics m;
  // Before any group: the fixed series at zero, the policy's levels registered.
  m.setGroupLevels({"nvidia.com/gpu.clique"});
  // The hold-release reasons are the group book's names, declared by the wiring at start-up
  // (tests/cluster/hold_release_metrics_test.cpp checks the whole list against the docs).
  m.declareHoldReleaseReasons({"claimed", "expired"});
  // The decisions are the service's names (groupDecisionNames), declared when it is made.
  m.declareGroupDecisionOutcomes({"planned", "no_room"});
  std::string text = m.serialize();
  CHECK(has(text, R"(gpu_topology_extender_group_decisions_total{outcome="planned"} 0)"));
  CHECK(has(text, R"(gpu_topology_extender_group_holds_released_total{reason="expired"} 0)"));
  CHECK(has(text, R"(gpu_topology_extender_group_holds{kind="slots"} 0)"));
  CHECK(has(
      text,
      R"(gpu_topology_extender_groups_placed_total{level="nvidia.com/gpu.clique",placement="split"} 0)"));
  m.countGroupDecision("planned");
  m.countGroupDecision("no_room");
  m.countGroupDecision("no_room");
  m.countHoldsReleased("claimed", 3);
  m.countHoldsReleased("expired", 1);
  m.countHoldsReleased("no-such-reason", 5);  // not one of the fixed reasons: not counted
  m.countGroupPlaced("nvidia.com/gpu.clique", true);
  m.countGroupPlaced("network.topology.nvidia.com/block", false);  // a level added by a reload
  m.setGroupHolds(6, 2);
  m.observeGroupFirstToLast(4.0);
  text = m.serialize();
  CHECK(has(text, R"(gpu_topology_extender_group_decisions_total{outcome="no_room"} 2)"));
  CHECK(has(text, R"(gpu_topology_extender_group_holds_released_total{reason="claimed"} 3)"));
  CHECK(has(text, R"(gpu_topology_extender_group_holds_released_total{reason="expired"} 1)"));
  CHECK(has(
      text,
      R"(gpu_topology_extender_groups_placed_total{level="nvidia.com/gpu.clique",placement="whole"} 1)"));
  CHECK(has(
      text,
      R"(gpu_topology_extender_groups_placed_total{level="network.topology.nvidia.com/block",placement="split"} 1)"));
  CHECK(has(text, R"(gpu_topology_extender_group_holds{kind="groups"} 2)"));
  // 4 s falls in the 5 s bucket, not the 2.5 s one.
  CHECK(has(text, R"(gpu_topology_extender_group_first_to_last_bound_seconds_bucket{le="2.5"} 0)"));
  CHECK(has(text, R"(gpu_topology_extender_group_first_to_last_bound_seconds_bucket{le="5"} 1)"));
}

}  // namespace gte::metrics
