#pragma once
// Explain: for one pod and the nodes of one request, everything filter and prioritize decided and
// what it rests on. The verdicts and reasons are filterNodes' own result for the same demand,
// candidates and policy; the scores and terms prioritizeNodes' own, and the wire scores
// prioritizeNodes' over the candidates filter kept, which is what kube-scheduler sends prioritize
// after filter (the functions the filter and prioritize verbs call), so an explanation can never
// disagree with the answers kube-scheduler got. The details behind them (the GPUs the device plugin
// would hand out, the MIG placement, the best set) come from the precomputed NodeState through
// predictAllocation and wholeGpuPick, the lookups checkFit and scoreTerms make. Pure: no I/O,
// clock, locks or globals.
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "core/allocation.h"
#include "core/dra_decision.h"
#include "core/fit_outcome.h"
#include "core/group_answers.h"
#include "core/node_candidate.h"
#include "core/node_state.h"
#include "core/pod_demand.h"
#include "core/scarce_sets.h"
#include "core/score_node.h"
#include "policy/policy.h"

namespace gte {

struct NodeExplanation {
  std::string_view name;
  Verdict verdict = Verdict::kFit;
  std::string reason;  // the text filter answers (with the wire prefix); empty for kFit
  int score = 0;       // 0..100, prioritizeNodes' score
  // 0..10, prioritizeNodes' wire score over the candidates filter keeps, which is the request
  // kube-scheduler sends prioritize after filter (before its own plugins drop any); 0 for a node
  // filter rejects (never sent to prioritize).
  int wireScore = 0;
  ScoreTerms terms;                  // prioritizeNodes' terms (-1: does not apply)
  const NodeState* state = nullptr;  // null: unresolved (reason says why)
  Allocation allocation;             // predictAllocation: what the pod would get here
  std::optional<GpuPick> pick;       // the whole-GPU set behind `allocation.gpus`
  std::optional<GpuPick> best;       // the best set of that size among the free GPUs
  // DRA (docs/dra.md): the devices the scheduler's allocator is predicted to take for the pod's
  // claims on this node (and its nvidia.com/gpu on a node handing it out through DRA); unset for
  // pods without DRA demand.
  std::optional<DraPlacement> dra;
};

struct Explanation {
  std::vector<NodeExplanation> nodes;  // one per candidate, in the candidates' order
  ScarceSets scarceSets;               // the set holders the scores were weighed by
};

// `group`: a pod group member's answers (one per candidate), and `scarce`: the cluster's set
// holders (null: counted over the nodes filter keeps), as filter and prioritize take them.
Explanation explainNodes(const Result<PodDemand>& demand, std::span<const NodeCandidate> nodes,
                         const Policy& policy, const GroupAnswers* group = nullptr,
                         const ScarceSets* scarce = nullptr);

// Distinct NUMA nodes of the set on this node; 0 when a GPU's NUMA node is unknown.
int numaSpan(GpuMask gpus, const NodeState& state) noexcept;

}  // namespace gte
