#pragma once
// The FGD-style fragmentation measure the binpack score and the fragmentation gauges share
// (docs/scoring.md, "Packing"; docs/topology-health.md): for each request size of a fixed,
// equally weighted set, the free GPUs of a node that size cannot use. Inline: the score reads it
// twice per size for every node it scores through scoreTerms.
#include <array>
#include <cstdint>

#include "core/node_state.h"

namespace gte {

// The request sizes fragmentation is judged against, equally likely: the whole-GPU shapes that
// dominate real traces (a node may be bigger; sizes above its GPU count can never use it).
inline constexpr std::array<int, 4> kFragmentationSizes = {1, 2, 4, 8};

// Whether `free` GPUs whose largest all-NVLink set is `clique` can host a request of `size` as well
// as the empty node could: an all-NVLink set where the empty node's device-plugin pick of that size
// is all-NVLink, else enough GPUs.
inline bool hostsAsWellAsEmpty(const NodeState& state, int size, int free, int clique) noexcept {
  if (size > free) {
    return false;
  }
  const bool nvlinkWhenEmpty =
      size >= 2 && size < 32 && ((state.nvlinkWhenEmptySizes >> size) & 1U) != 0;
  return !nvlinkWhenEmpty || clique >= size;
}

// Free GPUs a request of `size` cannot use on this node (all of them, or none).
inline int unusableFreeGpus(const NodeState& state, int size, int free, int clique) noexcept {
  return hostsAsWellAsEmpty(state, size, free, clique) ? 0 : free;
}

}  // namespace gte
