#include "sim/fragmentation.h"

namespace gte::sim {
namespace {

// Whether a k-GPU request gets, now, a set whose weakest link is as good as the empty node's.
bool hostsAsWellAsEmpty(const NodeState& state, int k) {
  if (k > state.freeCount || state.capacity == nullptr ||
      static_cast<std::size_t>(k) >= state.capacity->size()) {
    return false;
  }
  const GpuPick& pick = state.whole[static_cast<std::size_t>(k)].devicePlugin;
  return pick.gpus != 0 &&
         pick.weakest >= (*state.capacity)[static_cast<std::size_t>(k)].devicePluginWeakest;
}

}  // namespace

Fragmentation measureFragmentation(std::span<const NodeStateConstSharedPtr> nodes,
                                   const SizeShares& shares) {
  Fragmentation result;
  double fgd = 0;
  double topology = 0;
  for (const NodeStateConstSharedPtr& node : nodes) {
    const int free = node->freeCount;
    result.freeGpus += free;
    if (free == 0) {
      continue;
    }
    for (int k = 1; k < static_cast<int>(shares.size()); ++k) {
      const double share = shares[static_cast<std::size_t>(k)];
      if (share == 0) {
        continue;
      }
      if (k > free) {
        fgd += share * free;
      }
      if (!hostsAsWellAsEmpty(*node, k)) {
        topology += share * free;
      }
    }
  }
  if (result.freeGpus > 0) {
    result.fgdRate = fgd / static_cast<double>(result.freeGpus);
    result.topologyRate = topology / static_cast<double>(result.freeGpus);
  }
  return result;
}

}  // namespace gte::sim
