#pragma once
// The largest set of GPUs among `members` in which every pair is joined by NVLink: the biggest
// all-NVLink job the node could still host. Exact (branch and bound over at most 16 GPUs).
#include "topology/pair_table.h"

namespace gte {

// 0 for no members, 1 when no two members share an NVLink.
int largestNvlinkClique(const PairTable& table, GpuMask members);

}  // namespace gte
