#include "topology/pair_table.h"

namespace gte {

LinkClass PairTable::weakestLink(GpuMask set) const noexcept {
  LinkClass weakest = LinkClass::kNvlink;
  for (GpuMask rest = set; rest != 0; rest &= rest - 1) {
    const auto i = static_cast<std::size_t>(std::countr_zero(rest));
    for (GpuMask later = rest & (rest - 1); later != 0; later &= later - 1) {
      const LinkClass cls = linkClass[i][static_cast<std::size_t>(std::countr_zero(later))];
      if (cls < weakest) {
        weakest = cls;
      }
    }
  }
  return weakest;
}

bool PairTable::singleNuma(GpuMask set) const noexcept {
  if (set == 0) {
    return false;
  }
  const int first = numa[static_cast<std::size_t>(std::countr_zero(set))];
  if (first < 0) {
    return false;
  }
  for (GpuMask rest = set; rest != 0; rest &= rest - 1) {
    if (numa[static_cast<std::size_t>(std::countr_zero(rest))] != first) {
      return false;
    }
  }
  return true;
}

}  // namespace gte
