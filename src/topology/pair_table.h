#pragma once
// Dense per-pair facts of one node, extracted from its GpuGraph for the bitmask searches: the
// policy's pair scores, the NVIDIA device plugin's pair scores, link classes and NVLink
// neighbours. Plain data so the hot loops touch arrays, not graph iterators.
#include <array>
#include <bit>

#include "policy/link_class.h"
#include "topology/gpu_topology.h"

namespace gte {

// A score per ordered GPU pair, indexed [gpu][gpu].
using PairScores = std::array<std::array<int, kMaxGpus>, kMaxGpus>;

struct PairTable {
  int gpuCount = 0;
  PairScores score{};        // policy LinkScores
  PairScores pluginScore{};  // go-gpuallocator scores
  std::array<std::array<LinkClass, kMaxGpus>, kMaxGpus> linkClass{};
  std::array<GpuMask, kMaxGpus> nvlinkNeighbours{};
  std::array<int, kMaxGpus> numa{};  // -1 unknown
  int maxScore = 0;                  // best policy pair score on the node (search bound)

  int setScore(GpuMask set) const noexcept { return sum(score, set); }
  int pluginSetScore(GpuMask set) const noexcept { return sum(pluginScore, set); }
  // The weakest pair class in `set`; kNvlink (nothing weaker) for sets of fewer than two GPUs.
  LinkClass weakestLink(GpuMask set) const noexcept;
  // True when every GPU of `set` has the same known NUMA node.
  bool singleNuma(GpuMask set) const noexcept;

 private:
  static int sum(const PairScores& table, GpuMask set) noexcept {
    int total = 0;
    for (GpuMask rest = set; rest != 0; rest &= rest - 1) {
      const int i = std::countr_zero(rest);
      for (GpuMask later = rest & (rest - 1); later != 0; later &= later - 1) {
        total +=
            table[static_cast<std::size_t>(i)][static_cast<std::size_t>(std::countr_zero(later))];
      }
    }
    return total;
  }
};

// Calls f(i, j) for every pair i < j of GPUs in `set`.
template <class F>
void forEachPair(GpuMask set, F&& f) {
  for (GpuMask rest = set; rest != 0; rest &= rest - 1) {
    const int i = std::countr_zero(rest);
    for (GpuMask later = rest & (rest - 1); later != 0; later &= later - 1) {
      f(i, std::countr_zero(later));
    }
  }
}

constexpr GpuMask bitOf(int gpu) noexcept {
  return GpuMask{1} << static_cast<unsigned>(gpu);
}
constexpr GpuMask allGpus(int n) noexcept {
  return n >= 32 ? ~GpuMask{0} : (GpuMask{1} << static_cast<unsigned>(n)) - 1u;
}
// Inline bit arithmetic rather than std::popcount: built for baseline x86-64 (no POPCNT
// instruction), std::popcount is a call into libgcc, which was 30% of the 16-GPU pick search.
inline int gpuCountOf(GpuMask set) noexcept {
  set = set - ((set >> 1) & 0x55555555u);
  set = (set & 0x33333333u) + ((set >> 2) & 0x33333333u);
  set = (set + (set >> 4)) & 0x0f0f0f0fu;
  return static_cast<int>((set * 0x01010101u) >> 24);
}

}  // namespace gte
