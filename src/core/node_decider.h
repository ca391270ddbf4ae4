#pragma once
// One pod decided on each node of a request: whether it fits (checkFit's verdict and reason) and
// the terms and 0..100 score it gets there (scoreTerms, weightedScore). For a plain demand (k whole
// GPUs, nothing else) on a node with precomputed answers the decision is read from them, which the
// snapshot builder computed with the same two functions; any other demand, or a node without
// answers, calls them. This is the one place that chooses: the loops in src/filter and
// src/prioritize only iterate over the candidates and write what it decides. Pure, and inline: it
// runs once per node of every request.
#include <cstddef>
#include <cstdint>

#include "core/fit.h"
#include "core/fit_outcome.h"
#include "core/node_candidate.h"
#include "core/node_state.h"
#include "core/plain_answers.h"
#include "core/pod_demand.h"
#include "core/predict_allocation.h"
#include "core/score_node.h"
#include "core/set_quality.h"
#include "policy/policy.h"

namespace gte {

// How many candidates ahead a loop asks for a node's cache lines (NodeDecider::prefetch): enough
// to overlap the misses of consecutive nodes, few enough that the lines are still in L1 when their
// node comes.
inline constexpr std::size_t kCandidatePrefetchAhead = 8;

class NodeDecider {
 public:
  // Both must outlive the decider.
  NodeDecider(const PodDemand& demand, const Policy& policy) noexcept
      : demand_(demand), policy_(policy), plainGpus_(PlainAnswers::gpusOf(demand)) {}

  // The fit check on a resolved candidate (`node.state` set).
  FitOutcome fit(const NodeCandidate& node) const {
    return usesAnswers(node) ? node.plain->forGpus(plainGpus_).fit()
                             : checkFit(demand_, *node.state, policy_);
  }

  // The score terms on a resolved candidate; all -1 when the pod asks for no GPUs or the node
  // offers it no placement.
  ScoreTerms terms(const NodeCandidate& node) const {
    if (demand_.empty()) return ScoreTerms{};
    return usesAnswers(node) ? node.plain->forGpus(plainGpus_).terms(demand_.strategy)
                             : scoreTerms(demand_, *node.state);
  }

  int score(const ScoreTerms& terms) const { return weightedScore(terms, policy_); }

  // How well linked the whole GPUs are that the pod would get on a resolved candidate that fits:
  // what placement regret compares (unknown for fewer than two GPUs). From the same line of the
  // precomputed answer the terms come from.
  SetQuality set(const NodeCandidate& node) const noexcept {
    return usesAnswers(node) ? node.plain->forGpus(plainGpus_).set
                             : setQualityOf(demand_, *node.state);
  }

  // Starts loading the cache lines fit() and terms() will read of `node`: its precomputed answer,
  // or the state's first line and, for whole GPUs, its inline pick. Reads nothing itself.
  void prefetch(const NodeCandidate& node) const noexcept {
    if (usesAnswers(node)) {
      __builtin_prefetch(&node.plain->forGpus(plainGpus_));
      return;
    }
    if (node.state == nullptr) return;
    __builtin_prefetch(node.state);
    const auto k = static_cast<std::size_t>(demand_.gpus);
    if (k > 0 && k < NodeState::kInlinePicks) {
      __builtin_prefetch(&node.state->devicePluginPicks[k]);
    }
  }

 private:
  bool usesAnswers(const NodeCandidate& node) const noexcept {
    return plainGpus_ > 0 && node.plain != nullptr;
  }

  const PodDemand& demand_;
  const Policy& policy_;
  std::int64_t plainGpus_;
};

}  // namespace gte
