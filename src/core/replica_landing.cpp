#include "core/replica_landing.h"

#include <algorithm>
#include <bit>
#include <climits>

namespace gte {

ReplicaLanding landReplicas(const NodeState& state, std::int64_t k) {
  ReplicaLanding out;
  const int perGpu = state.sharing.replicas;
  std::array<int, kMaxGpus> held{};
  for (int gpu = 0; gpu < kMaxGpus; ++gpu)
    held[static_cast<std::size_t>(gpu)] = state.tenantsOf(gpu);
  const auto open = [&](int gpu) {
    const int t = held[static_cast<std::size_t>(gpu)];
    return t < 255 && (perGpu <= 0 || t < perGpu);
  };
  while (k > 0) {
    // The GPUs at the lowest level that still have a replica: each takes one, in some order.
    int level = INT_MAX;
    GpuMask lowest = 0;
    for (GpuMask rest = state.freeMask; rest != 0; rest &= rest - 1) {
      const int gpu = std::countr_zero(rest);
      if (gpu >= kMaxGpus || !open(gpu)) continue;
      const int t = held[static_cast<std::size_t>(gpu)];
      if (t < level) {
        level = t;
        lowest = 0;
      }
      if (t == level) lowest |= GpuMask{1} << gpu;
    }
    if (lowest == 0) break;
    const int ties = std::popcount(lowest);
    if (k < ties) {
      out.tied = lowest;
      out.undecided = static_cast<int>(k);
      return out;
    }
    for (GpuMask rest = lowest; rest != 0; rest &= rest - 1) {
      const auto gpu = static_cast<std::size_t>(std::countr_zero(rest));
      ++held[gpu];
      ++out.certain[gpu];
    }
    k -= ties;
  }
  out.unplaced = static_cast<int>(std::max<std::int64_t>(k, 0));
  return out;
}

}  // namespace gte
