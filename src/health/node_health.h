#pragma once
// One node's contribution to the cluster's topology-health figures (docs/topology-health.md):
// how many k-GPU pods its free GPUs can still host at the best link class the node offers, how
// many free GPUs no all-NVLink set of the common sizes can use (stranded), the MIG slices no
// legal placement of a profile in use can take, the FGD-style fragmentation the scoring
// computes, and the set a k-GPU pod would get here now. Computed once per node state (the
// snapshot builder keeps it beside the state), so a change on one node costs one node's
// recomputation; the cluster figures are sums. Pure.
#include <array>
#include <cstddef>
#include <cstdint>

#include "core/fragmentation.h"
#include "core/node_state.h"
#include "core/set_quality.h"

namespace gte {

// The request sizes the figures are given for; index i of every per-size array is
// kHealthSizes[i].
inline constexpr std::array<int, 4> kHealthSizes = {1, 2, 4, 8};
inline constexpr std::size_t kHealthSizeCount = kHealthSizes.size();
// Sizes 1..kMaxOfferedGpus have an `offered` entry (the plain demands of core/plain_answers.h).
inline constexpr int kMaxOfferedGpus = 8;
// Shared GPUs are counted by their tenants 0..kTenantBuckets - 2, the last bucket holding every
// GPU with more (labels-v1 `tenants` reads up to 35).
inline constexpr std::size_t kTenantBuckets = 33;

// The counts a node contributes and a pool or cluster sums: `Count` is a node's width or a
// total's.
template <class Count>
struct HealthCounts {
  Count freeGpus = 0;
  // Disjoint sets of k free GPUs whose weakest link is at least the one the device plugin would
  // give a k-GPU pod on the emptied node: the k-GPU pods of the node's best class that still fit.
  // 0 where the node has fewer than k usable GPUs.
  std::array<Count, kHealthSizeCount> hostable{};
  // The free GPUs of a node that could host a k-GPU pod when empty (k usable GPUs), else 0:
  // summed over a pool and divided by k, the pods those free GPUs could host if they were packed.
  std::array<Count, kHealthSizeCount> packable{};
  // Disjoint all-NVLink sets of k free GPUs (k = 1: every free GPU).
  std::array<Count, kHealthSizeCount> nvlinkSets{};
  // Free GPUs in no all-NVLink set of k free GPUs, on a node whose usable GPUs hold one (else 0;
  // k = 1: 0).
  std::array<Count, kHealthSizeCount> stranded{};
  // Unpartitioned MIG slices of MIG-enabled GPUs that no legal placement of a profile the node
  // already has an instance of can take (0 when it has none).
  Count strandedMigSlices = 0;
  // Summed over core/fragmentation.h's sizes (1, 2, 4, 8): the free GPUs each size cannot use, as
  // the binpack score counts them. A quarter of it is FGD's expected fragmentation, equal shares.
  Count unusableGpus = 0;
  // GPUs the device plugin shares among pods (time-slicing, MPS; docs/sharing.md): the usable
  // GPUs of such nodes, the replicas they offer (replicas per GPU x GPUs; a node whose count is
  // not labelled, its allocatable nvidia.com/gpu), the replicas pods hold (the agent's `tenants`),
  // and the GPUs by their tenants.
  Count sharedGpus = 0;
  Count sharedReplicas = 0;
  Count sharedReplicasUsed = 0;
  std::array<Count, kTenantBuckets> sharedGpusByTenants{};
  // MIG devices the device plugin shares (docs/sharing.md#mig-devices-shared): the replicas their
  // devices offer (replicas per device x devices of a shared profile) and those pods hold (what the
  // placement reads: the agent's count per device, and the replicas the extender placed since).
  Count sharedMigReplicas = 0;
  Count sharedMigReplicasUsed = 0;
  // Hardware the node agent marks (labels-v1 `health`, `nvlh`; docs/health.md): GPUs failed,
  // degraded (a DRA device taint of effect None counts too) and cordoned; GPU pairs whose NVLinks
  // are degraded, down or cordoned; and the degraded GPUs and degraded or down pairs pods hold
  // (both GPUs of a pair taken).
  Count failedGpus = 0;
  Count degradedGpus = 0;
  Count cordonedGpus = 0;
  Count degradedLinks = 0;
  Count downLinks = 0;
  Count cordonedLinks = 0;
  Count degradedGpusInUse = 0;
  Count degradedLinksInUse = 0;

  template <class Other>
  void addCounts(const HealthCounts<Other>& other) noexcept {
    freeGpus += other.freeGpus;
    for (std::size_t i = 0; i < kHealthSizeCount; ++i) {
      hostable[i] += other.hostable[i];
      packable[i] += other.packable[i];
      nvlinkSets[i] += other.nvlinkSets[i];
      stranded[i] += other.stranded[i];
    }
    strandedMigSlices += other.strandedMigSlices;
    unusableGpus += other.unusableGpus;
    sharedGpus += other.sharedGpus;
    sharedReplicas += other.sharedReplicas;
    sharedReplicasUsed += other.sharedReplicasUsed;
    for (std::size_t t = 0; t < kTenantBuckets; ++t)
      sharedGpusByTenants[t] += other.sharedGpusByTenants[t];
    sharedMigReplicas += other.sharedMigReplicas;
    sharedMigReplicasUsed += other.sharedMigReplicasUsed;
    failedGpus += other.failedGpus;
    degradedGpus += other.degradedGpus;
    cordonedGpus += other.cordonedGpus;
    degradedLinks += other.degradedLinks;
    downLinks += other.downLinks;
    cordonedLinks += other.cordonedLinks;
    degradedGpusInUse += other.degradedGpusInUse;
    degradedLinksInUse += other.degradedLinksInUse;
  }
  friend bool operator==(const HealthCounts&, const HealthCounts&) = default;
};

// Index k (1..kMaxOfferedGpus; 0 unused): a set per request size.
using OfferedSets = std::array<SetQuality, kMaxOfferedGpus + 1>;

struct NodeHealth : HealthCounts<std::int32_t> {
  // Index k: the device plugin's pick for a k-GPU pod now; unknown for k = 1 and where k GPUs are
  // not free.
  OfferedSets offered{};
  // A search over more than 8 GPUs whose NVLink pairs form no cliques ran out of its work
  // allowance: the node's counts are lower bounds.
  bool approximate = false;
};

NodeHealth nodeHealth(const NodeState& state);

// Cluster or pool totals: sums of NodeHealth, and the best set any node offers per k.
struct HealthTotals : HealthCounts<std::int64_t> {
  std::int64_t nodes = 0;
  std::int64_t approximateNodes = 0;
  // Per k, the highest bandwidth and, separately, the best weakest class any node offers.
  OfferedSets bestOffered{};

  void add(const NodeHealth& node) noexcept;
  void add(const HealthTotals& other) noexcept;
  // The k-GPU pods (k = kHealthSizes[i]) the free GPUs of nodes able to host one could host if
  // packed.
  std::int64_t packed(std::size_t i) const noexcept { return packable[i] / kHealthSizes[i]; }
  // FGD's expected fragmentation in GPUs (equal shares of the sizes).
  double expectedUnusableGpus() const noexcept {
    return static_cast<double>(unusableGpus) / static_cast<double>(kFragmentationSizes.size());
  }
  // The tenants of the shared GPU at quantile `q` (0 < q <= 1; 1: the busiest): the fewest
  // tenants t such that at least q of the shared GPUs hold t or fewer. 0 without shared GPUs;
  // kTenantBuckets - 1 stands for that many or more.
  std::int64_t sharedTenantsAt(double q) const noexcept;
  // Replicas no pod holds (never below 0: the agent may count more tenants than a stale label
  // says the GPUs offer).
  std::int64_t sharedReplicasFree() const noexcept {
    return sharedReplicas > sharedReplicasUsed ? sharedReplicas - sharedReplicasUsed : 0;
  }
  std::int64_t sharedMigReplicasFree() const noexcept {
    return sharedMigReplicas > sharedMigReplicasUsed ? sharedMigReplicas - sharedMigReplicasUsed
                                                     : 0;
  }
  friend bool operator==(const HealthTotals&, const HealthTotals&) = default;
};

}  // namespace gte
