#pragma once
// How many k-GPU pods of the all-NVLink class a node's free GPUs could still take at once: the
// most disjoint sets of k free GPUs in which every pair is joined by NVLink. The what-if reports
// these before and after each placement (what a placement strands), for k = 1, 2, 4 and 8. Pure.
#include <array>
#include <cstddef>

#include "core/node_state.h"

namespace gte {

inline constexpr std::array<int, 4> kFreeSetSizes = {1, 2, 4, 8};

// Index i counts the sets of kFreeSetSizes[i] GPUs.
using FreeSetCounts = std::array<int, kFreeSetSizes.size()>;

// k = 1: the free GPUs. k >= 2: the most disjoint all-NVLink k-sets among the free GPUs; 0 when
// the node's links are unknown (nothing is known to be NVLink). Exact for every real node (up to
// 16 GPUs); a search past its allowance (a 16-GPU table without structure) returns the most it
// found by then.
int freeNvlinkSets(const NodeState& state, int k);
FreeSetCounts freeNvlinkSets(const NodeState& state);

}  // namespace gte
