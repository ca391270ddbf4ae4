// The explain endpoints of ExtenderService: the same prepare -> resolve -> core steps as filter and
// prioritize (compilePod on the one snapshot, resolveNodes, then explainNodes, which runs
// filterNodes and prioritizeNodes), written as one document per request instead of the two wire
// answers.
#include <chrono>

#include "core/compiled_pod.h"
#include "core/node_charges.h"
#include "log/logger.h"
#include "service/bound_pod.h"
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

Reply ExtenderService::explainResolved(const PodInfo& pod, const CompiledPod& compiled,
                                       Resolved& resolved, std::string_view mode,
                                       const PlacementRecord* placement,
                                       const BoundPod* bound) const {
  const Policy& policy = *resolved.policy;
  // Read-only: explain never commits a plan (no re-resolution either).
  const GroupDecision group =
      decideGroup(pod, compiled, resolved, cluster_, GroupWrite::kReadOnly, nullptr, nullptr);
  const Result<PodDemand> demand = compiled.decidable();
  Explanation explanation =
      explainNodes(demand, resolved.candidates, *resolved.policy, group.answersOrNull(),
                   resolved.snapshot ? &resolved.snapshot->scarceSets : nullptr);
  showHeldSlots(group, explanation);
  ExplainExtras extras;
  extras.group = &group;
  extras.domainNames = resolved.snapshot ? resolved.snapshot->groupDomains.get() : nullptr;
  extras.now = std::chrono::system_clock::now();
  extras.placement = placement;
  extras.bound = bound;
  return Reply{200, writeExplanation(pod, demand, mode, policy, explanation, extras)};
}

Reply ExtenderService::explain(std::string_view body) const {
  auto args = wire::parseExtenderArgs(body);
  if (!args) return explainError(args.error());
  const Prepared prepared = prepare(args->pod);
  auto resolved = resolve(*args, prepared);
  if (!resolved) return explainError(resolved.error());
  return explainResolved(args->pod, prepared.pod, *resolved,
                         resolved->nodesMode ? "nodes" : "nodeNames");
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
  const ClusterSnapshot& snapshot = *resolved->snapshot;
  const CompiledPod compiled =
      compilePod(*pod, *resolved->policy, snapshot.dra.get(), cluster_->groupSizes());
  // A pod already bound (or reserved by this extender's bind) is judged on its own node as if it
  // were not there: what it holds is its own, not another pod's.
  const std::optional<BoundPod> bound = findBoundPod(*pod, snapshot);
  if (bound) {
    for (NodeCandidate& candidate : resolved->candidates) {
      if (candidate.name != bound->node || candidate.state == nullptr) continue;
      NodeStateConstSharedPtr without =
          nodeStateWithout(*candidate.state, {pod->uid}, *resolved->policy);
      candidate.state = without.get();
      candidate.plain = nullptr;  // the published state's answers, not this one's
      resolved->held.push_back(std::move(without));
    }
  }
  return explainResolved(*pod, compiled, *resolved, "cluster", placement ? &*placement : nullptr,
                         bound ? &*bound : nullptr);
}

}  // namespace gte
