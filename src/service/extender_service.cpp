#include "service/extender_service.h"

#include <chrono>
#include <utility>
#include <vector>

#include "core/compiled_pod.h"
#include "core/node_candidate.h"
#include "core/node_state.h"
#include "core/pod_demand.h"
#include "filter/filter_nodes.h"
#include "log/logger.h"
#include "metrics/metrics.h"
#include "prioritize/prioritize_nodes.h"
#include "service/cluster_backend.h"
#include "service/error_reply.h"
#include "service/group_outcome.h"
#include "service/group_preemption_memory.h"
#include "service/group_requests.h"
#include "service/node_state_cache.h"
#include "service/placement_recorder.h"
#include "service/resolution_memo.h"
#include "service/resolve_nodes.h"
#include "snapshot/cluster_snapshot.h"
#include "wire/extender_args.h"
#include "wire/extender_results.h"
#include "wire/reason.h"
#include "wire/verb.h"

namespace gte {
namespace {

// The answer views the request's names and `out.reasonTexts`: nothing is copied per node.
wire::FilterResult toWire(const FilterResult& result, const Resolved& resolved) {
  wire::FilterResult out;
  std::vector<std::string>& reasons = out.reasonTexts;
  reasons.reserve(result.reasons.size());
  for (const std::string& text : result.reasons)
    reasons.push_back(wire::prefixedReason(text));
  out.nodesMode = resolved.nodesMode;
  for (std::size_t i = 0; i < result.nodes.size(); ++i) {
    const NodeVerdict& verdict = result.nodes[i];
    const std::string_view name = resolved.candidates[i].name;
    switch (verdict.verdict) {
      case Verdict::kFit:
        if (out.nodesMode) {
          out.keptNodes.push_back(resolved.raw[i]);
        } else {
          out.keptNames.emplace_back(name);
        }
        break;
      case Verdict::kUnschedulable:
        out.failed.push_back({name, reasons[verdict.reason]});
        break;
      case Verdict::kUnresolvable:
        out.failedUnresolvable.push_back({name, reasons[verdict.reason]});
        break;
    }
  }
  return out;
}

// What placement regret keeps of one prioritize request: its offer and the best set any node of
// the snapshot offered a pod of that size.
PlacementDecision decisionOf(const PlacementOffer& offer, const HealthTotals& cluster) {
  PlacementDecision decision;
  decision.gpus = offer.gpus;
  if (offer.gpus <= kMaxOfferedGpus) {
    decision.clusterBest = cluster.bestOffered[static_cast<std::size_t>(offer.gpus)];
  }
  decision.feasibleBest = offer.feasibleBest;
  decision.topWorst = offer.topWorst;
  decision.healthyBest = offer.healthyBest;
  decision.avoidedAny = offer.avoidedAny;
  decision.bestNode = offer.bestNode;
  decision.topNode = offer.topNode;
  return decision;
}

void countVerdicts(const FilterResult& result, metrics::Metrics* metrics) {
  if (!metrics) return;
  metrics->countFilterNodes(metrics::NodeOutcome::kFit, result.count(Verdict::kFit));
  metrics->countFilterNodes(metrics::NodeOutcome::kUnschedulable,
                            result.count(Verdict::kUnschedulable));
  metrics->countFilterNodes(metrics::NodeOutcome::kUnresolvable,
                            result.count(Verdict::kUnresolvable));
}

// A pod whose DRA demand is passed through: counted by reason, and logged (at debug: the scheduler
// asks once per attempt).
void countPassThrough(const Result<PodDemand>& demand, const PodInfo& pod,
                      metrics::Metrics* metrics) {
  if (!demand || !demand->dra || !demand->dra->passedThrough()) return;
  log::debug("DRA demand passed through",
             {{"pod", pod.ns + "/" + pod.name}, {"reason", demand->dra->passThrough}});
  if (metrics) metrics->countDraPassThrough(draPassThroughName(demand->dra->passThroughKind));
}

}  // namespace

ExtenderService::ExtenderService(PolicySource policy, ClusterBackend* cluster,
                                 metrics::Metrics* metrics, WhatifLimits whatifLimits,
                                 PlacementRecorder* placements,
                                 std::shared_ptr<GroupPreemptionMemory> preemptions)
    : policy_(std::move(policy)),
      cluster_(cluster),
      metrics_(metrics),
      placements_(placements),
      nodeCache_(std::make_unique<NodeStateCache>()),
      resolutions_(std::make_unique<ResolutionMemo>()),
      whatifLimits_(whatifLimits),
      preemptions_(preemptions ? std::move(preemptions)
                               : std::make_shared<GroupPreemptionMemory>()) {
  if (metrics_) {
    metrics_->declareDraPassThroughReasons(draPassThroughNames());
    metrics_->declareGroupDecisionOutcomes(groupOutcomeNames());
  }
}

ExtenderService::~ExtenderService() = default;

Reply ExtenderService::rejected(wire::Verb verb, const Error& error) const {
  log::warn("rejected request", {{"verb", wire::verbName(verb)}, {"error", error.message}});
  if (metrics_) metrics_->countRejectedRequest("malformed_json");
  return errorReply(verb, error);
}

Reply ExtenderService::undecided(wire::Verb verb, const Error& error) const {
  // A cache still filling is routine, a configuration mismatch is not.
  if (clearsByItself(error.code)) {
    log::info("request answered before the cache is ready",
              {{"verb", wire::verbName(verb)}, {"error", error.message}});
  } else {
    log::error("request cannot be decided",
               {{"verb", wire::verbName(verb)}, {"error", error.message}});
  }
  return errorReply(verb, error);
}

Reply ExtenderService::filter(std::string_view body) const {
  return filter(wire::parseExtenderArgs(body));
}

Reply ExtenderService::prioritize(std::string_view body) const {
  return prioritize(wire::parseExtenderArgs(body));
}

ExtenderService::Prepared ExtenderService::prepare(const PodInfo& pod) const {
  Prepared out;
  out.snapshot = cluster_ != nullptr ? cluster_->snapshot() : nullptr;
  out.policy = out.snapshot && out.snapshot->policy ? out.snapshot->policy : policy_();
  out.pod = compilePod(pod, *out.policy, out.snapshot ? out.snapshot->dra.get() : nullptr,
                       cluster_ != nullptr ? cluster_->groupSizes() : nullptr);
  return out;
}

Result<Resolved> ExtenderService::resolve(const wire::ExtenderArgs& args,
                                          const Prepared& prepared) const {
  return resolveNodes(args, cluster_, prepared.snapshot, prepared.policy, *nodeCache_, metrics_,
                      prepared.pod.grouped(), resolutions_.get());
}

GroupDecision ExtenderService::group(const wire::ExtenderArgs& args, const Prepared& prepared,
                                     Resolved& resolved, GroupWrite write) const {
  // A commit that finds its plan stale plans again on the newest snapshot.
  const Reresolve again = [&]() -> Result<Resolved> {
    auto newest = syncedSnapshot(cluster_);
    if (!newest) return std::move(newest).error();
    return resolveNodes(args, cluster_, *newest, (*newest)->policy, *nodeCache_, metrics_, true,
                        resolutions_.get());
  };
  GroupDecision decided =
      decideGroup(args.pod, prepared.pod, resolved, cluster_, write, again, metrics_);
  if (decided.committedHere) {
    const CommittedGroupPlan& plan = *decided.committed;
    log::info("pod group planned", {{"group", plan.group},
                                    {"members", std::to_string(plan.plan.slots.size())},
                                    {"where", plan.plan.reason}});
  }
  return decided;
}

std::optional<Reply> ExtenderService::withoutDemand(const wire::ExtenderArgs& args,
                                                    const Prepared& prepared,
                                                    wire::Verb verb) const {
  if (!args.nodeNames || args.nodes) return std::nullopt;
  // The general path answers an unsynced cache, and decides a pod of a group with its group.
  if (!prepared.snapshot || !prepared.snapshot->synced || !prepared.pod.asksNothing()) {
    return std::nullopt;
  }
  const std::vector<std::string>& names = *args.nodeNames;
  if (verb == wire::Verb::kFilter) {
    wire::FilterResult out;
    out.keptNames.assign(names.begin(), names.end());
    if (metrics_) metrics_->countFilterNodes(metrics::NodeOutcome::kFit, names.size());
    return Reply{200, wire::writeFilterResult(out)};
  }
  std::vector<wire::HostPriority> list;
  list.reserve(names.size());
  for (const std::string& name : names)
    list.push_back({name, 0});
  return Reply{200, wire::writeHostPriorityList(list)};
}

Reply ExtenderService::filter(Result<wire::ExtenderArgs> args) const {
  if (!args) return rejected(wire::Verb::kFilter, args.error());
  const Prepared prepared = prepare(args->pod);
  if (auto answer = withoutDemand(*args, prepared, wire::Verb::kFilter)) return std::move(*answer);
  auto resolved = resolve(*args, prepared);
  if (!resolved) return undecided(wire::Verb::kFilter, resolved.error());

  const GroupDecision decided = group(*args, prepared, *resolved, GroupWrite::kCommit);
  const Result<PodDemand> demand = prepared.pod.decidable();
  const FilterResult result =
      filterNodes(demand, resolved->candidates, *resolved->policy, decided.answersOrNull());
  countVerdicts(result, metrics_);
  countPassThrough(demand, args->pod, metrics_);
  if (!demand) {
    log::info("pod rejected by its own request",
              {{"pod", args->pod.ns + "/" + args->pod.name}, {"error", demand.error().message}});
  }
  return Reply{200, wire::writeFilterResult(toWire(result, *resolved))};
}

Reply ExtenderService::prioritize(Result<wire::ExtenderArgs> args) const {
  if (!args) return rejected(wire::Verb::kPrioritize, args.error());
  const Prepared prepared = prepare(args->pod);
  if (auto answer = withoutDemand(*args, prepared, wire::Verb::kPrioritize))
    return std::move(*answer);
  auto resolved = resolve(*args, prepared);
  if (!resolved) return undecided(wire::Verb::kPrioritize, resolved.error());

  const GroupDecision decided = group(*args, prepared, *resolved, GroupWrite::kReadOnly);
  const Result<PodDemand> demand = prepared.pod.decidable();
  // Placement regret needs the pod's UID (the watch reports it bound by UID) and the snapshot's
  // cluster-wide best set (NodeNames mode).
  const bool record = placements_ != nullptr && resolved->snapshot && !args->pod.uid.empty();
  PlacementOffer offer;
  const HostScores scores = prioritizeNodes(
      demand ? &*demand : nullptr, resolved->candidates, *resolved->policy, decided.answersOrNull(),
      record ? &offer : nullptr, resolved->snapshot ? &resolved->snapshot->scarceSets : nullptr);
  if (offer.any()) {
    placements_->decided(args->pod.uid, decisionOf(offer, resolved->snapshot->health.total));
  }
  std::vector<wire::HostPriority> list;
  list.reserve(scores.size());
  for (const HostScore& score : scores) {
    list.push_back({score.host, score.wire});
  }
  return Reply{200, wire::writeHostPriorityList(list)};
}

void ExtenderService::bind(std::string_view body, std::function<void(Reply)> done,
                           BindCaller caller) const {
  auto args = wire::parseBindingArgs(body);
  if (!args) {
    done(rejected(wire::Verb::kBind, args.error()));
    return;
  }
  if (!cluster_) {
    if (metrics_) metrics_->countBind(false);
    done(undecided(wire::Verb::kBind,
                   Error{ErrorCode::kFailedPrecondition,
                         "bind needs a cluster connection (--kubeconfig or --in-cluster); remove "
                         "bindVerb from the extender configuration to let kube-scheduler bind"}));
    return;
  }
  BindRequest request{args->podName, args->podNamespace, args->podUid, args->node};
  const std::string pod = args->podNamespace + "/" + args->podName;
  const std::string node = args->node;
  const auto received = caller.received;
  cluster_->bindAsync(
      std::move(request), std::move(caller),
      [this, pod, node, received, done = std::move(done)](BindOutcome outcome) {
        if (metrics_) {
          metrics_->countBind(outcome.status.ok());
          if (outcome.abandoned == BindAbandon::kCallerGone) {
            metrics_->countBindAbandoned(metrics::BindAbandonReason::kCallerGone);
          } else if (outcome.abandoned == BindAbandon::kDeadline) {
            metrics_->countBindAbandoned(metrics::BindAbandonReason::kDeadline);
          } else if (outcome.abandoned == BindAbandon::kNotLeader) {
            metrics_->countBindAbandoned(metrics::BindAbandonReason::kNotLeader);
          }
        }
        if (!outcome.status) {
          const bool abandoned = outcome.abandoned != BindAbandon::kNone;
          log::write(abandoned ? log::Level::kInfo : log::Level::kWarn,
                     abandoned ? "bind abandoned" : "bind failed",
                     {{"pod", pod}, {"node", node}, {"error", outcome.status.error().message}});
          done(errorReply(wire::Verb::kBind, outcome.status.error()));
          return;
        }
        const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - received);
        log::info("bound", {{"pod", pod},
                            {"node", node},
                            {"ms", std::to_string(took.count())},
                            {"slot_wait_ms", std::to_string(outcome.slotWait.count())},
                            {"pod_read", outcome.podRead ? "true" : "false"}});
        done(Reply{200, wire::writeBindingResult("")});
      });
}

bool ExtenderService::ready(std::string* why) const {
  if (!cluster_) return true;
  if (cluster_->ready()) return true;
  if (why) *why = "cluster cache not synced (first list of nodes and pods not complete)";
  return false;
}

bool ExtenderService::redirectsCallers() const {
  return cluster_ != nullptr && cluster_->redirectsCallers();
}

bool ExtenderService::healthy(std::string* why) const {
  return cluster_ ? cluster_->healthy(why) : true;
}

}  // namespace gte
