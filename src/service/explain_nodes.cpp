#include "service/explain_nodes.h"

#include <bit>

#include "core/node_decider.h"
#include "core/predict_allocation.h"
#include "dra_placement/dra_node_state.h"
#include "filter/filter_nodes.h"
#include "prioritize/prioritize_nodes.h"
#include "wire/reason.h"

namespace gte {
namespace {

// The best set of `k` GPUs among the node's free ones, by the policy's link scores.
std::optional<GpuPick> bestSet(std::int64_t k, const NodeState& state) {
  if (k <= 0 || k > state.freeCount) return std::nullopt;
  const GpuPick& best = state.whole[static_cast<std::size_t>(k)].best;
  if (best.gpus == 0) return std::nullopt;
  return best;
}

// What the pod would get on the node, by the route the decision takes there (NodeDecider): the
// device plugin's pick, and where its devices come from DRA the allocator's predicted devices.
void addDetails(const PodDemand& demand, NodePlacement placed, NodeExplanation& node) {
  const NodeState& state = *node.state;
  node.allocation = std::move(placed.allocation);
  if (placed.devicePluginPick != nullptr) node.pick = *placed.devicePluginPick;
  node.best = bestSet(demand.gpus + (demand.dra ? demand.dra->plainGpus : 0), state);
  node.dra = std::move(placed.dra);
  if (node.dra) {
    if (node.dra->outcome == DraOutcome::kPlaced && node.dra->pick.gpus != 0) {
      // The GPUs DRA takes, not the device plugin's pick.
      node.pick = node.dra->pick;
      node.allocation.complete = true;
      node.allocation.gpus.clear();
      for (GpuMask rest = node.dra->pick.gpus; rest != 0; rest &= rest - 1)
        node.allocation.gpus.push_back(std::countr_zero(rest));
    }
  }
}

}  // namespace

int numaSpan(GpuMask gpus, const NodeState& state) noexcept {
  if (state.status != TopologyStatus::kKnown) return 0;
  std::uint64_t seen = 0;
  for (GpuMask rest = gpus; rest != 0; rest &= rest - 1) {
    const auto gpu = static_cast<std::size_t>(std::countr_zero(rest));
    if (gpu >= state.topology.numa.size()) return 0;
    const int numa = state.topology.numa[gpu];
    if (numa < 0 || numa >= 64) return 0;
    seen |= std::uint64_t{1} << numa;
  }
  return std::popcount(seen);
}

Explanation explainNodes(const Result<PodDemand>& demand, std::span<const NodeCandidate> nodes,
                         const Policy& policy, const GroupAnswers* group,
                         const ScarceSets* scarce) {
  const PodDemand* pod = demand ? &*demand : nullptr;
  // The very calls the filter and prioritize verbs make: filter on the request's nodes, then
  // prioritize on the nodes filter kept, as kube-scheduler sends them. The scores and terms of the
  // rejected nodes, which do not depend on the other candidates, come from one more call on all.
  const FilterResult filtered = filterNodes(demand, nodes, policy, group);
  std::vector<NodeCandidate> kept;
  std::vector<std::size_t> keptAt;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (filtered.nodes[i].verdict == Verdict::kFit) {
      kept.push_back(nodes[i]);
      keptAt.push_back(i);
    }
  }
  const std::optional<GroupAnswers> keptGroup =
      group ? std::optional<GroupAnswers>(group->subset(keptAt)) : std::nullopt;
  // Both calls weigh scarce sets by the same counts: the cluster's, or those of the nodes
  // kube-scheduler would send prioritize.
  const ScarceSets counted = scarce != nullptr ? *scarce : countScarceSets(kept);
  const HostScores keptScores =
      prioritizeNodes(pod, kept, policy, keptGroup ? &*keptGroup : nullptr, nullptr, &counted);
  const HostScores scores = prioritizeNodes(pod, nodes, policy, group, nullptr, &counted);
  std::size_t nextKept = 0;
  std::optional<NodeDecider> decide;
  if (pod != nullptr) decide.emplace(*pod, policy, group);
  Explanation out;
  out.scarceSets = counted;
  out.nodes.reserve(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    NodeExplanation node;
    node.name = nodes[i].name;
    node.state = nodes[i].state;
    node.verdict = filtered.nodes[i].verdict;
    if (node.verdict == Verdict::kFit) {
      node.wireScore = keptScores[nextKept++].wire;
    } else {
      node.reason = wire::prefixedReason(filtered.reasons[filtered.nodes[i].reason]);
    }
    node.score = scores[i].score;
    node.terms = scores[i].terms;
    if (demand && node.state != nullptr) {
      NodePlacement placed;
      (void)decide->decide(nodes[i], i, DecisionPart{}, &placed);
      addDetails(*demand, std::move(placed), node);
    }
    out.nodes.push_back(std::move(node));
  }
  return out;
}

}  // namespace gte
