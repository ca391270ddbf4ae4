#include "service/extender_service.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "filter/filter_node.h"
#include "filter/filter_outcome.h"
#include "log/logger.h"
#include "metrics/metrics.h"
#include "prioritize/score_node.h"
#include "service/cluster_backend.h"
#include "service/node_state_cache.h"
#include "snapshot/cluster_snapshot.h"
#include "snapshot/node_state.h"
#include "snapshot/pod_demand.h"
#include "wire/extender_args.h"
#include "wire/extender_results.h"

namespace gte {
namespace {

// Every message kube-scheduler shows users (pod events, conditions) starts with this, so they can
// tell the extender's reasons from the in-tree plugins'.
constexpr std::string_view kReasonPrefix = "gpu-topology: ";

std::string reason(std::string_view text) {
  std::string out(kReasonPrefix);
  out.append(text);
  return out;
}

ServiceReply ok(std::string body) {
  return ServiceReply{200, std::move(body)};
}

ServiceReply badRequest(std::string_view verb, const Error& e, metrics::Metrics* metrics) {
  log::warn("rejected request", {{"verb", verb}, {"error", e.message}});
  if (metrics) metrics->countRejectedRequest("malformed_json");
  return ServiceReply{400, wire::writeErrorBody(reason(e.message))};
}

// Filter/bind carry their errors in the body's Error field with HTTP 200: kube-scheduler then shows
// the message in the pod's events instead of a bare "code 400".
ServiceReply filterError(const Error& e, metrics::Metrics* metrics, bool malformed) {
  log::warn("filter could not decide", {{"error", e.message}});
  if (metrics && malformed) metrics->countRejectedRequest("malformed_json");
  return ok(wire::writeFilterError(reason(e.message)));
}

// Reason texts depend only on the outcome's category and the pod's request, so a request formats
// each distinct one once, not once per rejected node.
class ReasonTexts {
 public:
  const std::string& textFor(const FilterOutcome& outcome, const PodDemand& demand) {
    for (const auto& [key, text] : cache_) {
      if (key.reason == outcome.reason && key.migRequest == outcome.migRequest) return text;
    }
    cache_.emplace_back(outcome, reason(filterReasonText(outcome, demand)));
    return cache_.back().second;
  }

 private:
  std::vector<std::pair<FilterOutcome, std::string>> cache_;
};

// One node to decide on, however the request named it.
struct Candidate {
  std::string_view name;
  std::string_view raw;              // full-Node mode: the bytes to echo
  const NodeState* state = nullptr;  // null: see `missing`
  std::string missing;               // why there is no state (unreadable node, not cached)
};

// Resolves the request's nodes to NodeStates: from the request's own Node objects (memoised by
// content), or from the cluster snapshot by name.
struct Resolved {
  PolicyConstSharedPtr policy;
  std::vector<Candidate> candidates;
  bool nodesMode = false;
  // Keep the states the candidates point to alive for the request.
  ClusterSnapshotConstSharedPtr snapshot;
  std::vector<NodeStateConstSharedPtr> held;
};

// Full-Node mode: states from the request's own Node objects, memoised by content.
Resolved fromNodeObjects(const std::vector<wire::NodeItem>& items, PolicyConstSharedPtr policy,
                         NodeStateCache& cache, metrics::Metrics* metrics) {
  Resolved out;
  out.nodesMode = true;
  out.policy = std::move(policy);
  out.candidates.reserve(items.size());
  out.held.reserve(items.size());
  for (const auto& item : items) {
    Candidate c{item.name, item.raw, nullptr, {}};
    if (!item.info) {
      c.missing = "node object unreadable";
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
    out.candidates.push_back(std::move(c));
  }
  return out;
}

// NodeNames mode: states from the cluster snapshot, loaded once for the whole request.
Result<Resolved> fromSnapshot(const std::vector<std::string>& names,
                              const ClusterBackend* cluster) {
  if (!cluster) {
    return Error{ErrorCode::kFailedPrecondition,
                 "NodeNames received but the extender runs without a cluster cache; start it with "
                 "--kubeconfig, --in-cluster or --cluster-file, or set nodeCacheCapable: false"};
  }
  auto snapshot = cluster->snapshot();
  if (!snapshot || !snapshot->synced) {
    return Error{ErrorCode::kFailedPrecondition, "cache not synced"};
  }
  Resolved out;
  out.policy = snapshot->policy;
  out.snapshot = snapshot;
  out.candidates.reserve(names.size());
  for (const auto& name : names) {
    Candidate c{name, {}, snapshot->find(name), {}};
    if (!c.state) c.missing = "node not in the extender's cache";
    out.candidates.push_back(std::move(c));
  }
  return out;
}

Result<Resolved> resolveNodes(const wire::ExtenderArgs& args, const ClusterBackend* cluster,
                              const ExtenderService::PolicySource& policySource,
                              NodeStateCache& cache, metrics::Metrics* metrics) {
  if (args.nodes) return fromNodeObjects(*args.nodes, policySource(), cache, metrics);
  return fromSnapshot(*args.nodeNames, cluster);
}

}  // namespace

ExtenderService::ExtenderService(PolicySource policy, ClusterBackend* cluster,
                                 metrics::Metrics* metrics)
    : policy_(std::move(policy)),
      cluster_(cluster),
      metrics_(metrics),
      nodeCache_(std::make_unique<NodeStateCache>()) {}

ExtenderService::~ExtenderService() = default;

ServiceReply ExtenderService::filter(std::string_view body) const {
  auto args = wire::parseExtenderArgs(body);
  if (!args) return filterError(args.error(), metrics_, true);
  auto resolved = resolveNodes(*args, cluster_, policy_, *nodeCache_, metrics_);
  if (!resolved) return filterError(resolved.error(), metrics_, false);

  wire::FilterResult result;
  result.nodesMode = resolved->nodesMode;
  auto demand = parsePodDemand(args->pod, *resolved->policy);
  ReasonTexts reasons;
  std::uint64_t fit = 0, unschedulable = 0, unresolvable = 0;
  for (const auto& c : resolved->candidates) {
    if (!demand) {
      // An invalid annotation or request: no node can help, say which on every node.
      result.failedUnresolvable.push_back({std::string(c.name), reason(demand.error().message)});
      ++unresolvable;
      continue;
    }
    if (!c.state) {
      result.failedUnresolvable.push_back({std::string(c.name), reason(c.missing)});
      ++unresolvable;
      continue;
    }
    const FilterOutcome outcome = filterNode(*demand, *c.state, *resolved->policy);
    switch (outcome.verdict) {
      case Verdict::kFit:
        if (result.nodesMode) {
          result.keptNodes.push_back(c.raw);
        } else {
          result.keptNames.emplace_back(c.name);
        }
        ++fit;
        break;
      case Verdict::kUnschedulable:
        result.failed.push_back({std::string(c.name), reasons.textFor(outcome, *demand)});
        ++unschedulable;
        break;
      case Verdict::kUnresolvable:
        result.failedUnresolvable.push_back(
            {std::string(c.name), reasons.textFor(outcome, *demand)});
        ++unresolvable;
        break;
    }
  }
  if (metrics_) {
    metrics_->countFilterNodes(metrics::NodeOutcome::kFit, fit);
    metrics_->countFilterNodes(metrics::NodeOutcome::kUnschedulable, unschedulable);
    metrics_->countFilterNodes(metrics::NodeOutcome::kUnresolvable, unresolvable);
  }
  if (!demand) {
    log::info("pod rejected by its own request",
              {{"pod", args->pod.ns + "/" + args->pod.name}, {"error", demand.error().message}});
  }
  return ok(wire::writeFilterResult(result));
}

ServiceReply ExtenderService::prioritize(std::string_view body) const {
  auto args = wire::parseExtenderArgs(body);
  if (!args) return badRequest("prioritize", args.error(), metrics_);
  auto resolved = resolveNodes(*args, cluster_, policy_, *nodeCache_, metrics_);
  // Prioritize has no Error field; any non-200 makes kube-scheduler ignore this extender's scores
  // for the cycle, which is the right effect for an unsynced cache too.
  if (!resolved) {
    log::warn("prioritize could not decide", {{"error", resolved.error().message}});
    return ServiceReply{503, wire::writeErrorBody(reason(resolved.error().message))};
  }
  auto demand = parsePodDemand(args->pod, *resolved->policy);
  std::vector<wire::HostPriority> list;
  list.reserve(resolved->candidates.size());
  for (const auto& c : resolved->candidates) {
    std::int64_t score = 0;
    if (demand && c.state) {
      score = toExtenderScore(scoreNode(*demand, *c.state, *resolved->policy));
    }
    list.push_back({std::string(c.name), score});
  }
  return ok(wire::writeHostPriorityList(list));
}

void ExtenderService::bind(std::string_view body, std::function<void(ServiceReply)> done) const {
  auto args = wire::parseBindingArgs(body);
  if (!args) {
    log::warn("rejected bind", {{"error", args.error().message}});
    if (metrics_) metrics_->countRejectedRequest("malformed_json");
    done(ok(wire::writeBindingResult(reason(args.error().message))));
    return;
  }
  if (!cluster_) {
    if (metrics_) metrics_->countBind(false);
    done(ok(wire::writeBindingResult(
        reason("bind needs a cluster connection (--kubeconfig or --in-cluster); remove bindVerb "
               "from the extender configuration to let kube-scheduler bind"))));
    return;
  }
  BindRequest request{args->podName, args->podNamespace, args->podUid, args->node};
  const std::string pod = args->podNamespace + "/" + args->podName;
  const std::string node = args->node;
  cluster_->bindAsync(std::move(request), [this, pod, node, done = std::move(done)](Status status) {
    if (metrics_) metrics_->countBind(status.ok());
    if (!status) {
      log::warn("bind failed", {{"pod", pod}, {"node", node}, {"error", status.error().message}});
      done(ok(wire::writeBindingResult(reason(status.error().message))));
      return;
    }
    log::info("bound", {{"pod", pod}, {"node", node}});
    done(ok(wire::writeBindingResult("")));
  });
}

bool ExtenderService::ready(std::string* why) const {
  if (!cluster_) return true;
  if (cluster_->ready()) return true;
  if (why) *why = "cluster cache not synced (first list of nodes and pods not complete)";
  return false;
}

bool ExtenderService::healthy(std::string* why) const {
  return cluster_ ? cluster_->healthy(why) : true;
}

}  // namespace gte
