// The read-only views of ExtenderService beside explain: the what-if (pods placed on a copy of
// the cluster snapshot, sim/live_replay.h) and the node listing. Both read the one snapshot they
// load, change nothing, and answer errors through the error table.
#include <algorithm>
#include <chrono>
#include <vector>

#include "log/logger.h"
#include "service/error_reply.h"
#include "service/extender_service.h"
#include "service/nodes_json.h"
#include "service/resolve_nodes.h"
#include "service/whatif.h"
#include "service/whatif_json.h"

namespace gte {
namespace {

Reply refused(wire::Verb verb, const Error& error) {
  if (clearsByItself(error.code)) {
    log::info("request refused", {{"verb", wire::verbName(verb)}, {"error", error.message}});
  } else {
    log::warn("request refused", {{"verb", wire::verbName(verb)}, {"error", error.message}});
  }
  return errorReply(verb, error);
}

Error needsCluster(std::string_view what) {
  return Error{
      ErrorCode::kFailedPrecondition,
      std::string(what) + " needs a cluster cache (--kubeconfig, --in-cluster or --cluster-file)"};
}

// Marks the what-if running for its lifetime; false when another one already is.
class WhatifSlot {
 public:
  explicit WhatifSlot(std::atomic<bool>& running) : running_(running) {
    bool idle = false;
    held_ = running_.compare_exchange_strong(idle, true);
  }
  ~WhatifSlot() {
    if (held_) running_.store(false);
  }
  WhatifSlot(const WhatifSlot&) = delete;
  WhatifSlot& operator=(const WhatifSlot&) = delete;
  bool held() const noexcept { return held_; }

 private:
  std::atomic<bool>& running_;
  bool held_ = false;
};

}  // namespace

Reply ExtenderService::whatif(std::string_view body) const {
  const auto started = std::chrono::steady_clock::now();
  if (!cluster_) return refused(wire::Verb::kWhatif, needsCluster("a what-if"));
  auto request = parseWhatifRequest(body, whatifLimits_.maxPods);
  if (!request) return refused(wire::Verb::kWhatif, request.error());
  const WhatifSlot slot(whatifRunning_);
  if (!slot.held()) {
    return refused(wire::Verb::kWhatif,
                   Error{ErrorCode::kUnavailable,
                         "another what-if is running (one at a time); try again shortly"});
  }
  auto snapshot = syncedSnapshot(cluster_);
  if (!snapshot) return refused(wire::Verb::kWhatif, snapshot.error());
  const auto deadline = started + whatifLimits_.deadline;
  auto outcome = runWhatif(
      *request, std::move(*snapshot),
      [deadline] { return std::chrono::steady_clock::now() < deadline; }, cluster_->groupSizes());
  if (!outcome) return refused(wire::Verb::kWhatif, outcome.error());
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - started);
  if (outcome->stopped) {
    return refused(
        wire::Verb::kWhatif,
        Error{ErrorCode::kTooLarge,
              "the what-if ran past its deadline of " +
                  std::to_string(whatifLimits_.deadline.count()) + " ms (--whatif-deadline) with " +
                  std::to_string(outcome->pods.size()) + " pods on " +
                  std::to_string(outcome->nodes.size()) + " nodes; ask for fewer pods"});
  }
  log::info("whatif", {{"pods", std::to_string(outcome->pods.size())},
                       {"nodes", std::to_string(outcome->nodes.size())},
                       {"policies", std::to_string(outcome->runs.size())},
                       {"took_ms", std::to_string(took.count())}});
  return Reply{200, writeWhatif(*outcome)};
}

Reply ExtenderService::nodes(const NodesQuery& query) const {
  if (!cluster_) return refused(wire::Verb::kNodes, needsCluster("the node listing"));
  auto snapshot = syncedSnapshot(cluster_);
  if (!snapshot) return refused(wire::Verb::kNodes, snapshot.error());
  const ClusterSnapshot& cache = **snapshot;
  std::vector<ListedNode> listed;
  if (!query.node.empty()) {
    const NodeState* state = cache.find(query.node);
    if (state == nullptr) {
      return refused(wire::Verb::kNodes, Error{ErrorCode::kNotFound,
                                               "node \"" + query.node + "\" is not in the cache"});
    }
    listed.push_back({query.node, state});
  } else {
    listed.reserve(cache.nodes.size());
    cache.nodes.forEach([&listed](const std::string& name, const NodeStateConstSharedPtr& state) {
      listed.push_back({name, state.get()});
    });
    std::sort(listed.begin(), listed.end(),
              [](const ListedNode& a, const ListedNode& b) { return a.name < b.name; });
    if (listed.size() > query.limit) listed.resize(query.limit);
  }
  return Reply{200, writeNodeListing(listed, cache.nodes.size())};
}

}  // namespace gte
