#include "topology/nvlink_islands.h"

#include <algorithm>
#include <bit>

#include "topology/pair_table.h"

namespace gte {
namespace {

// The largest all-NVLink subset of `members`; among equal sizes the first in lexicographic order
// of sorted indices. Depth first with the lowest candidate first visits cliques in that order, and
// the best is replaced only by a strictly larger one, so the first maximum found is kept; a branch
// is cut only when it cannot be strictly larger than the best so far.
class FirstLargestClique {
 public:
  explicit FirstLargestClique(const std::array<GpuMask, kMaxGpus>& neighbours)
      : neighbours_(neighbours) {}

  GpuMask run(GpuMask members) {
    grow(members, 0, 0);
    return best_;
  }

 private:
  void grow(GpuMask candidates, GpuMask clique, int size) {
    if (size > bestSize_) {
      bestSize_ = size;
      best_ = clique;
    }
    while (candidates != 0) {
      if (size + gpuCountOf(candidates) <= bestSize_) {
        return;
      }
      const int gpu = std::countr_zero(candidates);
      candidates &= candidates - 1;
      grow(candidates & neighbours_[static_cast<std::size_t>(gpu)], clique | bitOf(gpu), size + 1);
    }
  }

  const std::array<GpuMask, kMaxGpus>& neighbours_;
  GpuMask best_ = 0;
  int bestSize_ = 0;
};

}  // namespace

std::vector<int> nvlinkIslands(const std::array<GpuMask, kMaxGpus>& nvlinkNeighbours,
                               int gpuCount) {
  const int n = std::clamp(gpuCount, 0, kMaxGpus);
  std::vector<int> island(static_cast<std::size_t>(n), -1);
  GpuMask left = allGpus(n);
  while (left != 0) {
    const GpuMask clique = FirstLargestClique(nvlinkNeighbours).run(left);
    const int id = std::countr_zero(clique);
    for (GpuMask rest = clique; rest != 0; rest &= rest - 1) {
      island[static_cast<std::size_t>(std::countr_zero(rest))] = id;
    }
    left &= ~clique;
  }
  return island;
}

std::vector<int> nvlinkIslands(const GpuTopology& topology) {
  std::array<GpuMask, kMaxGpus> neighbours{};
  const int n = std::min(topology.gpuCount, kMaxGpus);
  if (topology.linksKnown) {
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < n; ++j) {
        if (topology.nvlinkCount(i, j) == 0) continue;
        neighbours[static_cast<std::size_t>(i)] |= bitOf(j);
        neighbours[static_cast<std::size_t>(j)] |= bitOf(i);
      }
    }
  }
  return nvlinkIslands(neighbours, n);
}

}  // namespace gte
