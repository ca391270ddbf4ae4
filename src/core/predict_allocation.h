#pragma once
// The GPUs and MIG instances a pod would take on a node: the NVIDIA device plugin's pick for whole
// GPUs (inside the Topology Manager's NUMA node when the pod asks for one), and the MIG plan.
#include "core/allocation.h"
#include "core/node_candidate.h"
#include "core/node_state.h"
#include "core/pod_demand.h"

namespace gte {

Allocation predictAllocation(const PodDemand& demand, const NodeState& state);

// The whole-GPU pick the pod gets on this node, or nullptr when none of that size exists.
const GpuPick* wholeGpuPick(const PodDemand& demand, const NodeState& state) noexcept;

// Starts loading the cache lines the request loops read of `node` for `demand`: its precomputed
// answer when `plainGpus` (PlainAnswers::gpusOf) is set and the node has answers, else what
// checkFit and scoreTerms read of the state (its first line and, for whole GPUs, the inline pick).
// The loops call it a few nodes ahead so that the misses of consecutive nodes overlap. Reads
// nothing itself.
inline void prefetchForDemand(const PodDemand& demand, std::int64_t plainGpus,
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
