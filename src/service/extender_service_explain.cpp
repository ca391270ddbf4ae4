// The explain endpoints of ExtenderService: the same parse -> resolve -> core steps as filter and
// prioritize (resolveNodes, parsePodDemand, then explainNodes, which runs filterNodes and
// prioritizeNodes), written as one document per request instead of the two wire answers.
#include "log/logger.h"
#include "service/cluster_backend.h"
#include "service/error_reply.h"
#include "service/explain_json.h"
#include "service/explain_nodes.h"
#include "service/extender_service.h"
#include "service/node_state_cache.h"
#include "service/placement_recorder.h"
#include "service/resolve_nodes.h"
#include "wire/extender_args.h"

namespace gte {
namespace {

// Explain answers errors as HTTP statuses with a JSON {"Error": ...} body (the error table's
// explain column).
Reply explainError(const Error& error) {
  log::info("explain refused", {{"error", error.message}});
  return errorReply(wire::Verb::kExplain, error);
}

Reply explainResolved(const PodInfo& pod, const Resolved& resolved, std::string_view mode,
                      const PlacementRecord* placement = nullptr) {
  const Policy& policy = *resolved.policy;
  const auto demand = parsePodDemand(pod, policy);
  const Explanation explanation = explainNodes(demand, resolved.candidates, policy);
  return Reply{200, writeExplanation(pod, demand, mode, policy, explanation, placement)};
}

}  // namespace

Reply ExtenderService::explain(std::string_view body) const {
  auto args = wire::parseExtenderArgs(body);
  if (!args) return explainError(args.error());
  auto resolved = resolveNodes(*args, cluster_, policy_, *nodeCache_, metrics_);
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
