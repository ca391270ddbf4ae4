#include "metrics/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <array>
#include <mutex>
#include <sstream>

namespace gte::metrics {
namespace {

constexpr std::array<const char*, 5> kVerbNames = {"filter", "prioritize", "bind", "preempt",
                                                   "other"};
// The status codes the server answers; anything else is counted as "other".
constexpr std::array<int, 7> kCodes = {200, 400, 404, 405, 413, 500, 503};
constexpr std::array<const char*, 4> kRejectReasons = {"body_too_large", "malformed_json",
                                                       "bad_request", "other"};

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
  prometheus::Family<prometheus::Counter>& rejected =
      prometheus::BuildCounter()
          .Name("gpu_topology_extender_rejected_requests_total")
          .Help("Requests refused before a decision, by reason.")
          .Register(*registry);

  // Label sets resolved once; [verb][code] with a trailing "other" code.
  std::array<std::array<prometheus::Counter*, kCodes.size() + 1>, kVerbNames.size()> requestBy{};
  std::array<prometheus::Histogram*, kVerbNames.size()> latencyBy{};
  std::array<prometheus::Counter*, 3> filterBy{};
  std::array<prometheus::Counter*, 2> reloadBy{};
  std::array<prometheus::Counter*, 2> bindBy{};
  std::array<prometheus::Counter*, kRejectReasons.size()> rejectedBy{};
  prometheus::Gauge* nodesGauge = nullptr;
  prometheus::Gauge* podsGauge = nullptr;
  prometheus::Gauge* reservationsGauge = nullptr;

  std::mutex policyMutex;  // guards the single policy_info series
  prometheus::Gauge* policyGauge = nullptr;

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
    for (std::size_t i = 0; i < kRejectReasons.size(); ++i) {
      rejectedBy[i] = &rejected.Add({{"reason", kRejectReasons[i]}});
    }
    nodesGauge = &cached.Add({{"kind", "node"}});
    podsGauge = &cached.Add({{"kind", "pod"}});
    reservationsGauge = &cached.Add({{"kind", "reservation"}});
  }
};

Metrics::Metrics() : impl_(std::make_unique<Impl>()) {}
Metrics::~Metrics() = default;

void Metrics::observeRequest(Verb verb, int httpStatus, double seconds) {
  const auto v = static_cast<std::size_t>(verb);
  impl_->requestBy[v][codeIndex(httpStatus)]->Increment();
  impl_->latencyBy[v]->Observe(seconds);
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
  std::lock_guard lock(impl_->policyMutex);
  if (impl_->policyGauge) impl_->policyInfo.Remove(impl_->policyGauge);
  impl_->policyGauge = &impl_->policyInfo.Add({{"hash", std::string(hash)}});
  impl_->policyGauge->Set(1);
}

void Metrics::countSnapshotBuilds(std::uint64_t n) {
  if (n > 0) impl_->snapshotBuilds.Increment(static_cast<double>(n));
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

void Metrics::countRejectedRequest(std::string_view reason) {
  for (std::size_t i = 0; i < kRejectReasons.size(); ++i) {
    if (reason == kRejectReasons[i]) {
      impl_->rejectedBy[i]->Increment();
      return;
    }
  }
  impl_->rejectedBy.back()->Increment();
}

std::string Metrics::serialize() const {
  const auto families = impl_->registry->Collect();
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace gte::metrics
