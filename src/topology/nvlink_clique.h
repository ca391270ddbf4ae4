#pragma once
// The largest set of GPUs among `members` in which every pair is joined by NVLink: the biggest
// all-NVLink job the node could still host. Exact (branch and bound over at most 16 GPUs).
#include "topology/pair_table.h"

namespace gte {

// 0 for no members, 1 when no two members share an NVLink.
int largestNvlinkClique(const PairTable& table, GpuMask members);
// The same from each GPU's NVLink neighbours alone (what a DRA node keeps of its table).
int largestNvlinkClique(const std::array<GpuMask, kMaxGpus>& nvlinkNeighbours, GpuMask members);

// For each GPU in `members`: the size of the largest all-NVLink set of members that contains it
// (0 for GPUs outside `members`). How fragmented a node's free GPUs are for multi-GPU jobs: a free
// GPU whose best set is 1 can only serve 1-GPU pods with NVLink-class links.
std::array<int, kMaxGpus> nvlinkSetSizes(const GpuTopology& topology, GpuMask members);

}  // namespace gte
