#pragma once
// A node's GPUs split into NVLink islands: disjoint sets in which every pair is joined directly by
// NVLink (cliques of the NVLink graph). The node agent publishes each GPU's island id with its
// companion device (docs/dra.md, "NVLink islands"), so that one DRA `matchAttribute` on the id
// asks for GPUs of one island.
//
// The rule, deterministic and the same on every node of a board type:
//   1. Among the GPUs not yet placed, take the largest all-NVLink set; among equally large ones,
//      the one whose GPU indices, sorted, come first lexicographically.
//   2. Repeat until every GPU is placed. A GPU with no NVLink peer left is an island of its own.
//   3. An island's id is the lowest GPU index in it.
// Greedy by size: the largest island is always as large as the node's largest NVLink clique,
// which is what a multi-GPU claim asks for first.
#include <array>
#include <vector>

#include "topology/gpu_topology.h"

namespace gte {

// Per GPU (index 0..n-1, n = min(gpuCount, kMaxGpus)): its island id. Links unknown: every GPU is
// an island of its own.
std::vector<int> nvlinkIslands(const GpuTopology& topology);
// The same from each GPU's NVLink neighbours (bit j of [i] set: i and j share an NVLink).
std::vector<int> nvlinkIslands(const std::array<GpuMask, kMaxGpus>& nvlinkNeighbours, int gpuCount);

}  // namespace gte
