#include "health/degraded_hardware.h"

#include <algorithm>

namespace gte {

AvoidedPairs avoidedPairs(const GpuTopology& topology, const HealthPolicy& policy,
                          GpuMask degraded) {
  AvoidedPairs out;
  const int n = std::min(topology.gpuCount, kMaxGpus);
  const bool gpus = policy.degradedGpus == DegradedGpus::kAvoid;
  const bool links = policy.degradedLinks == DegradedLinks::kAvoid;
  if (gpus) out.degraded = degraded & allGpus(n);
  // Pairs are ranked by links only where links are known.
  if (!topology.linksKnown) return out;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      const LinkHealth mark = topology.linkHealthOf(i, j);
      const bool avoided =
          (links && (mark == LinkHealth::kDegraded || mark == LinkHealth::kDown)) ||
          (out.degraded & (bitOf(i) | bitOf(j))) != 0;
      if (!avoided) continue;
      out.peers[static_cast<std::size_t>(i)] |= bitOf(j);
      out.peers[static_cast<std::size_t>(j)] |= bitOf(i);
      out.gpus |= bitOf(i) | bitOf(j);
    }
  }
  return out;
}

LinkClass scoredWeakest(const AvoidedPairs& avoided, const GpuTopology& topology, GpuMask set,
                        LinkClass weakest) {
  if (!avoided.holds(set)) return weakest;
  LinkClass out = weakest;
  forEachPair(set, [&](int i, int j) {
    if ((avoided.peers[static_cast<std::size_t>(i)] & bitOf(j)) != 0) {
      out = std::min(out, linkClassOf(topology.pcieLevel(i, j)));
    }
  });
  return out;
}

}  // namespace gte
