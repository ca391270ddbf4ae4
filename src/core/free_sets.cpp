#include "core/free_sets.h"

#include <algorithm>
#include <bit>

#include "topology/pair_table.h"

namespace gte {
namespace {

// Branch and bound over the lowest free GPU: it is either in one of the k-sets (each all-NVLink
// k-set containing it is tried) or in none. Stops at the bound (free GPUs / k) once reached.
class SetPacking {
 public:
  SetPacking(const NodeState& state, int k) : k_(k) {
    const int n = std::min(state.topology.gpuCount, kMaxGpus);
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < n; ++j) {
        if (state.topology.nvlinkCount(i, j) > 0) {
          peers_[static_cast<std::size_t>(i)] |= bitOf(j);
          peers_[static_cast<std::size_t>(j)] |= bitOf(i);
        }
      }
    }
  }

  int most(GpuMask free) {
    const int bound = gpuCountOf(free) / k_;
    if (bound == 0 || --allowance_ < 0) return 0;
    const int lowest = std::countr_zero(free);
    const GpuMask rest = free & ~bitOf(lowest);
    int best = 0;
    withSets(bitOf(lowest), rest & peers_[static_cast<std::size_t>(lowest)], k_ - 1,
             [&](GpuMask set) {
               best = std::max(best, 1 + most(free & ~set));
               return best == bound;
             });
    if (best < bound) best = std::max(best, most(rest));
    return best;
  }

 private:
  // Calls visit(set) for each all-NVLink set of `chosen` plus `need` GPUs of `candidates` (every
  // candidate is a peer of every chosen GPU), until visit returns true; true then.
  template <class Visit>
  bool withSets(GpuMask chosen, GpuMask candidates, int need, Visit&& visit) {
    if (need == 0) return visit(chosen);
    while (gpuCountOf(candidates) >= need && allowance_ >= 0) {
      const int next = std::countr_zero(candidates);
      candidates &= ~bitOf(next);
      if (withSets(chosen | bitOf(next), candidates & peers_[static_cast<std::size_t>(next)],
                   need - 1, visit)) {
        return true;
      }
    }
    return false;
  }

  int k_;
  std::array<GpuMask, kMaxGpus> peers_{};
  // Searches (calls of most) left; the exact searches of real nodes take a few hundred at most.
  long allowance_ = 20'000;
};

}  // namespace

int freeNvlinkSets(const NodeState& state, int k) {
  if (k <= 0) return 0;
  if (k == 1) return state.freeCount;
  if (!state.linksKnown() || state.freeCount < k) return 0;
  return SetPacking(state, k).most(state.freeMask);
}

FreeSetCounts freeNvlinkSets(const NodeState& state) {
  FreeSetCounts counts{};
  for (std::size_t i = 0; i < kFreeSetSizes.size(); ++i) {
    counts[i] = freeNvlinkSets(state, kFreeSetSizes[i]);
  }
  return counts;
}

}  // namespace gte
