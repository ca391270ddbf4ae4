#include "core/allocator_chain.h"

#include "dra_placement/dra_node_state.h"
#include "topology/device_plugin_pick.h"
#include "topology/pair_table.h"

namespace gte {

AllocatorChain computeAllocatorChain(const PairTable& table, GpuMask free, bool linksKnown,
                                     std::span<const GpuMask> firstPicks, PickBudget* budget,
                                     const std::vector<int>* draOrder) {
  AllocatorChain chain;
  const int freeCount = gpuCountOf(free);
  for (int k = 1; k <= kChainSizes; ++k) {
    GpuMask left = free;
    for (int taken = 0; gpuCountOf(left) >= k && k <= freeCount; ++taken) {
      const auto at = static_cast<std::size_t>(k);
      const GpuMask gpus =
          taken == 0 && at < firstPicks.size() && firstPicks[at] != 0 ? firstPicks[at]
          : draOrder != nullptr ? firstInDraOrder(*draOrder, left, k)
                                : predictDevicePluginPick(table, left, 0, k, budget);
      if (gpus == 0) break;
      const LinkClass weakest = linksKnown ? table.weakestLink(gpus)
                                : k == 1   ? LinkClass::kNvlink
                                           : LinkClass::kUnknown;
      chain.picks.push_back({gpus, weakest});
      left &= ~gpus;
    }
    chain.begin[static_cast<std::size_t>(k)] = static_cast<std::uint16_t>(chain.picks.size());
  }
  return chain;
}

}  // namespace gte
