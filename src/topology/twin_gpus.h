#pragma once
// Twins: two GPUs that score the same with every other GPU of a set (the two GPUs of one PCIe
// switch). Swapping twins keeps every pair score, so of two sets that differ only by which twin
// they hold, the searches keep the one with the earlier twin: it comes first and wins the tie.
#include <array>

#include "topology/pair_table.h"

namespace gte {

// Per GPU b of `eligible`, the GPUs a < b of `eligible` that score the same as b with every
// member of `members` other than a and b. `eligible` must lie within `members`.
std::array<GpuMask, kMaxGpus> earlierTwins(const PairScores& scores, GpuMask members,
                                           GpuMask eligible);

}  // namespace gte
