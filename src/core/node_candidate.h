#pragma once
// One node a request asks about, resolved to its state: from the request's own Node object
// (full-Node mode) or from the cluster snapshot (NodeNames mode). The per-request loops in
// src/filter and src/prioritize take a list of these.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/node_state.h"
#include "core/plain_answers.h"
#include "core/pod_demand.h"

namespace gte {

struct NodeCandidate {
  std::string_view name;
  const NodeState* state = nullptr;  // null: the node could not be resolved, `missing` says why
  std::string_view missing;
  // The state's precomputed answers for plain demands (NodeNames mode); null: none, the loops
  // call checkFit and scoreTerms.
  const PlainAnswers* plain = nullptr;
};

// How many candidates ahead the per-request loops (filterNodes, prioritizeNodes) ask for a node's
// cache lines: enough to overlap the misses of consecutive nodes, few enough that the lines are
// still in L1 when their node comes.
inline constexpr std::size_t kCandidatePrefetchAhead = 8;

// Starts loading the cache lines those loops read of `node` for `demand`: its precomputed answer
// when `plainGpus` (PlainAnswers::gpusOf) is set and the node has answers, else what checkFit and
// scoreTerms read of the state (its first line and, for whole GPUs, the inline pick). Reads
// nothing itself.
inline void prefetchCandidate(const PodDemand& demand, std::int64_t plainGpus,
                              const NodeCandidate& node) noexcept {
  if (plainGpus > 0 && node.plain != nullptr) {
    __builtin_prefetch(&node.plain->forGpus(plainGpus));
    return;
  }
  if (node.state == nullptr) return;
  __builtin_prefetch(node.state);
  const auto k = static_cast<std::size_t>(demand.gpus);
  if (k > 0 && k < NodeState::kInlinePicks) __builtin_prefetch(&node.state->devicePluginPicks[k]);
}

}  // namespace gte
