#pragma once
// How much free GPU capacity the request sizes the cluster sees can no longer use (FGD's
// fragmentation measure for whole GPUs), and the topology-aware variant: a k-GPU request counts as
// hostable on a node only if the device plugin would hand it a set as well linked as on the empty
// node (all-NVLink on NVSwitch and cube-mesh quads). CPU and memory are not considered.
#include <array>
#include <cstdint>
#include <span>

#include "core/node_state.h"

namespace gte::sim {

// Share of GPU requests by size, index k = 1..8 (index 0 unused); sums to 1 over the sizes seen.
using SizeShares = std::array<double, 9>;

struct Fragmentation {
  int percent = 0;            // arrived GPU demand, % of capacity, when measured
  std::int64_t freeGpus = 0;  // free GPUs in the cluster
  double fgdRate = 0;         // expected free GPUs a request cannot use / free GPUs
  double topologyRate = 0;    // the same, a request needing a set as good as on the empty node
};

Fragmentation measureFragmentation(std::span<const NodeStateConstSharedPtr> nodes,
                                   const SizeShares& shares);

}  // namespace gte::sim
