// The explain endpoints of ExtenderService: the same parse -> resolve -> core steps as filter and
// prioritize (resolveNodes, parsePodDemand, then explainNodes, which runs filterNodes and
// prioritizeNodes), written as one document per request instead of the two wire answers.
#include <chrono>

#include "log/logger.h"
#include "service/cluster_backend.h"
#include "service/error_reply.h"
#include "service/explain_json.h"
#include "service/explain_nodes.h"
#include "service/extender_service.h"
#include "service/node_state_cache.h"
#include "service/placement_recorder.h"
#include "service/resolve_nodes.h"
#include "snapshot/cluster_snapshot.h"
#include "wire/extender_args.h"

namespace gte {
namespace {

// Explain answers errors as HTTP statuses with a JSON {"Error": ...} body (the error table's
// explain column).
Reply explainError(const Error& error) {
  log::info("explain refused", {{"error", error.message}});
  return errorReply(wire::Verb::kExplain, error);
}

// A member's planned nodes show the GPUs its group holds there for it.
void showHeldSlots(const GroupDecision& group, Explanation& explanation) {
  const CommittedGroupPlan* plan = group.committed.get();
  if (plan == nullptr || !group.answers) return;
  for (std::size_t i = 0; i < explanation.nodes.size(); ++i) {
    if (group.answers->nodes[i] != GroupAnswers::Kind::kPlanned) continue;
    for (std::size_t slot = 0; slot < plan->plan.slots.size(); ++slot) {
      if (plan->held(slot) && plan->plan.slots[slot].node == explanation.nodes[i].name) {
        explanation.nodes[i].allocation = plan->plan.slots[slot].allocation;
        break;
      }
    }
  }
}

}  // namespace

Reply ExtenderService::explainResolved(const PodInfo& pod, Resolved& resolved,
                                       std::string_view mode,
                                       const PlacementRecord* placement) const {
  const Policy& policy = *resolved.policy;
  Result<PodDemand> demand = parsePodDemand(pod, policy, draObjectsOf(resolved));
  GroupDecision none;
  Result<GroupDecision> group = none;
  if (podNamesGroup(pod, cluster_, policy_)) {
    // Read-only: explain never commits a plan (no re-resolution either).
    group = decideGroup(pod, demand, resolved, cluster_, GroupWrite::kReadOnly, nullptr, nullptr);
    if (!group) demand = group.error();
  }
  const GroupDecision* decision = group ? &*group : nullptr;
  Explanation explanation = explainNodes(demand, resolved.candidates, *resolved.policy,
                                         decision ? decision->answersOrNull() : nullptr);
  if (decision != nullptr) showHeldSlots(*decision, explanation);
  ExplainExtras extras;
  extras.group = decision;
  extras.domainNames = resolved.snapshot ? resolved.snapshot->groupDomains.get() : nullptr;
  extras.now = std::chrono::system_clock::now();
  extras.placement = placement;
  return Reply{200, writeExplanation(pod, demand, mode, policy, explanation, extras)};
}

Reply ExtenderService::explain(std::string_view body) const {
  auto args = wire::parseExtenderArgs(body);
  if (!args) return explainError(args.error());
  auto resolved = resolve(*args, podNamesGroup(args->pod, cluster_, policy_));
  if (!resolved) return explainError(resolved.error());
  return explainResolved(args->pod, *resolved, resolved->nodesMode ? "nodes" : "nodeNames");
}

Reply ExtenderService::explainPod(std::string_view podRef) const {
  if (!cluster_) {
    return explainError(
        Error{ErrorCode::kFailedPrecondition,
              "explain of a pod by name needs a cluster cache (--kubeconfig, "
              "--in-cluster or --cluster-file); POST an ExtenderArgs body instead"});
  }
  const auto slash = podRef.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == podRef.size()) {
    return explainError(
        invalidArgument("pod: expected NAMESPACE/NAME, got \"" + std::string(podRef) + "\""));
  }
  const std::string ns(podRef.substr(0, slash));
  const std::string name(podRef.substr(slash + 1));
  // The snapshot first: an unsynced cache answers 503 without asking the API server.
  auto resolved = resolveAllNodes(cluster_);
  if (!resolved) return explainError(resolved.error());
  auto pod = cluster_->podByName(ns, name);
  if (!pod) return explainError(pod.error());
  // What placement regret kept for it: the decision, and once bound, what it got.
  std::optional<PlacementRecord> placement;
  if (placements_ && !pod->uid.empty()) placement = placements_->find(pod->uid);
  return explainResolved(*pod, *resolved, "cluster", placement ? &*placement : nullptr);
}

}  // namespace gte
