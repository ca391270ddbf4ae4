#include "topology/nvlink_clique.h"

#include <algorithm>

namespace gte {
namespace {

class CliqueSearch {
 public:
  explicit CliqueSearch(const std::array<GpuMask, kMaxGpus>& neighbours)
      : neighbours_(neighbours) {}

  int run(GpuMask members) {
    grow(members, 0);
    return best_;
  }

 private:
  // Extends a clique of `size` GPUs by any of `candidates` (all joined to every member by
  // NVLink), pruning branches that cannot beat the best found.
  void grow(GpuMask candidates, int size) {
    if (size > best_) {
      best_ = size;
    }
    while (candidates != 0) {
      if (size + gpuCountOf(candidates) <= best_) {
        return;
      }
      const int gpu = std::countr_zero(candidates);
      candidates &= candidates - 1;
      grow(candidates & neighbours_[static_cast<std::size_t>(gpu)], size + 1);
    }
  }

  const std::array<GpuMask, kMaxGpus>& neighbours_;
  int best_ = 0;
};

}  // namespace

int largestNvlinkClique(const PairTable& table, GpuMask members) {
  return CliqueSearch(table.nvlinkNeighbours).run(members);
}

int largestNvlinkClique(const std::array<GpuMask, kMaxGpus>& nvlinkNeighbours, GpuMask members) {
  return CliqueSearch(nvlinkNeighbours).run(members);
}

std::array<int, kMaxGpus> nvlinkSetSizes(const GpuTopology& topology, GpuMask members) {
  PairTable table;
  table.gpuCount = std::min(topology.gpuCount, kMaxGpus);
  for (int i = 0; i < table.gpuCount; ++i) {
    for (int j = i + 1; j < table.gpuCount; ++j) {
      if (topology.nvlinkCount(i, j) == 0) continue;
      table.nvlinkNeighbours[static_cast<std::size_t>(i)] |= GpuMask{1} << j;
      table.nvlinkNeighbours[static_cast<std::size_t>(j)] |= GpuMask{1} << i;
    }
  }
  std::array<int, kMaxGpus> sizes{};
  for (GpuMask rest = members; rest != 0; rest &= rest - 1) {
    const int gpu = std::countr_zero(rest);
    if (gpu >= table.gpuCount) break;
    // Every set of NVLink neighbours of `gpu` that is all-NVLink stays so with `gpu` added.
    const GpuMask around = members & table.nvlinkNeighbours[static_cast<std::size_t>(gpu)];
    sizes[static_cast<std::size_t>(gpu)] = 1 + largestNvlinkClique(table, around);
  }
  return sizes;
}

}  // namespace gte
