#include "topology/twin_gpus.h"

namespace gte {
namespace {

bool sameRows(const PairScores& scores, int a, int b, GpuMask members) {
  const auto& rowA = scores[static_cast<std::size_t>(a)];
  const auto& rowB = scores[static_cast<std::size_t>(b)];
  for (GpuMask rest = members & ~(bitOf(a) | bitOf(b)); rest != 0; rest &= rest - 1) {
    const auto x = static_cast<std::size_t>(std::countr_zero(rest));
    if (rowA[x] != rowB[x]) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::array<GpuMask, kMaxGpus> earlierTwins(const PairScores& scores, GpuMask members,
                                           GpuMask eligible) {
  std::array<GpuMask, kMaxGpus> twins{};
  for (GpuMask later = eligible; later != 0; later &= later - 1) {
    const int b = std::countr_zero(later);
    for (GpuMask earlier = eligible & (bitOf(b) - 1u); earlier != 0; earlier &= earlier - 1) {
      const int a = std::countr_zero(earlier);
      if (sameRows(scores, a, b, members)) {
        twins[static_cast<std::size_t>(b)] |= bitOf(a);
      }
    }
  }
  return twins;
}

}  // namespace gte
