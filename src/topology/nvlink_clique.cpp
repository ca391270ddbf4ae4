#include "topology/nvlink_clique.h"

namespace gte {
namespace {

class CliqueSearch {
 public:
  explicit CliqueSearch(const PairTable& table) : table_(table) {}

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
      grow(candidates & table_.nvlinkNeighbours[static_cast<std::size_t>(gpu)], size + 1);
    }
  }

  const PairTable& table_;
  int best_ = 0;
};

}  // namespace

int largestNvlinkClique(const PairTable& table, GpuMask members) {
  return CliqueSearch(table).run(members);
}

}  // namespace gte
