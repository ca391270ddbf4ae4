#include "health/node_health.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "core/fragmentation.h"
#include "core/free_sets.h"
#include "topology/mig_placement.h"
#include "topology/mig_sharing.h"
#include "topology/pair_table.h"

namespace gte {
namespace {

// Free slices of MIG-enabled GPUs that no free legal placement of a profile the node has an
// instance of covers.
int strandedMigSlices(const NodeState& state) {
  if (!state.migProduct) return 0;
  const MigProduct& product = *state.migProduct;
  std::vector<const MigProfile*> inUse;
  for (const auto& instances : state.migInstances) {
    for (const MigInstance& instance : instances) {
      const MigProfile* profile = product.findByCode(instance.profileCode);
      if (profile && std::find(inUse.begin(), inUse.end(), profile) == inUse.end()) {
        inUse.push_back(profile);
      }
    }
  }
  if (inUse.empty()) return 0;  // no profile to judge the free slices by
  int stranded = 0;
  for (std::size_t gpu = 0; gpu < state.migUsable.size(); ++gpu) {
    if (!state.migUsable[gpu]) continue;
    const SliceMask occupied = state.migOccupied[gpu];
    SliceMask reachable = 0;
    for (const MigProfile* profile : inUse) {
      for (const int start : profile->starts) {
        if (start + profile->slices <= kMigMemorySlices &&
            placementFree(occupied, start, profile->slices)) {
          reachable = static_cast<SliceMask>(reachable | sliceMask(start, profile->slices));
        }
      }
    }
    const auto free = static_cast<SliceMask>(~occupied);
    stranded += std::popcount(static_cast<unsigned>(free & ~reachable & 0xFFu));
  }
  return stranded;
}

}  // namespace

namespace {

// The device plugin shares the node's whole GPUs among pods (time-slicing, MPS).
bool sharesGpus(const NodeState& state) noexcept {
  return state.sharesGpus;
}

// A shared node's GPUs, replicas and tenants (HealthCounts::sharedGpus and the rest).
void addSharedGpus(const NodeState& state, NodeHealth& health) {
  for (GpuMask rest = state.usableMask; rest != 0; rest &= rest - 1) {
    const int tenants = state.tenantsOf(std::countr_zero(rest));
    ++health.sharedGpus;
    health.sharedReplicasUsed += tenants;
    ++health.sharedGpusByTenants[std::min<std::size_t>(static_cast<std::size_t>(tenants),
                                                       kTenantBuckets - 1)];
  }
  if (state.sharing.replicas > 0) {
    health.sharedReplicas = health.sharedGpus * state.sharing.replicas;
  } else if (state.advertisedGpus() > 0) {
    health.sharedReplicas = static_cast<std::int32_t>(
        std::min<std::int64_t>(state.advertisedGpus(), std::numeric_limits<std::int32_t>::max()));
  }
}

// Shared MIG devices: each offers its profile's replicas; those left are the free entries the
// placement reads (NodeState::migFreeInstances, one per free replica), the rest are held.
void addSharedMig(const NodeState& state, NodeHealth& health) {
  if (!state.sharedMig || !state.migProduct) return;
  const MigReplicas replicas = migReplicasByCode(*state.sharedMig, *state.migProduct);
  if (replicas.empty()) return;
  std::int64_t offered = 0;
  std::int64_t free = 0;
  for (const std::vector<MigInstance>& instances : state.migInstances) {
    for (const MigInstance& instance : instances) {
      if (const auto it = replicas.find(instance.profileCode); it != replicas.end()) {
        offered += it->second;
      }
    }
  }
  for (const std::vector<MigInstance>& instances : state.migFreeInstances) {
    for (const MigInstance& instance : instances) {
      if (replicas.contains(instance.profileCode)) ++free;
    }
  }
  health.sharedMigReplicas = static_cast<std::int32_t>(offered);
  health.sharedMigReplicasUsed =
      static_cast<std::int32_t>(std::max<std::int64_t>(0, offered - free));
}

// The GPUs and NVLink pairs the agent marks (HealthCounts::failedGpus and the rest). Taken: GPUs
// that could be handed out but are not free.
void addMarkedHardware(const NodeState& state, NodeHealth& health) {
  const GpuTopology& topo = state.topology;
  const int n = std::min(topo.gpuCount, kMaxGpus);
  const GpuMask taken = state.usableMask & ~state.freeMask;
  for (int gpu = 0; gpu < n; ++gpu) {
    const GpuHealth mark = state.gpuHealth(gpu);
    if (mark == GpuHealth::kUnhealthy) ++health.failedGpus;
    if (mark == GpuHealth::kCordoned) ++health.cordonedGpus;
    if (mark == GpuHealth::kDegraded) {
      ++health.degradedGpus;
      if ((taken & bitOf(gpu)) != 0) ++health.degradedGpusInUse;
    }
  }
  if (topo.linkHealth.empty()) return;
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      const LinkHealth mark = topo.linkHealthOf(i, j);
      if (mark == LinkHealth::kOk) continue;
      if (mark == LinkHealth::kCordoned) {
        ++health.cordonedLinks;
        continue;
      }
      ++(mark == LinkHealth::kDegraded ? health.degradedLinks : health.downLinks);
      const GpuMask pair = bitOf(i) | bitOf(j);
      if ((taken & pair) == pair) ++health.degradedLinksInUse;
    }
  }
}

}  // namespace

NodeHealth nodeHealth(const NodeState& state) {
  NodeHealth health;
  health.freeGpus = state.freeCount;
  LinkSets sets(state);
  for (std::size_t i = 0; i < kHealthSizeCount; ++i) {
    const int k = kHealthSizes[i];
    if (k > state.usableCount || state.capacity == nullptr ||
        static_cast<std::size_t>(k) >= state.capacity->size()) {
      continue;  // can never host k: contributes nothing to any k figure
    }
    health.packable[i] = state.freeCount;
    health.nvlinkSets[i] = sets.most(state.freeMask, LinkClass::kNvlink, k);
    if (k >= 2 && sets.covered(state.usableMask, LinkClass::kNvlink, k) != 0) {
      health.stranded[i] =
          gpuCountOf(state.freeMask & ~sets.covered(state.freeMask, LinkClass::kNvlink, k));
    }
    const LinkClass best = (*state.capacity)[static_cast<std::size_t>(k)].devicePluginWeakest;
    health.hostable[i] =
        best == LinkClass::kNvlink ? health.nvlinkSets[i] : sets.most(state.freeMask, best, k);
    if (k >= 2 && sharesGpus(state)) {
      // Replicas land where the device plugin's tenant count puts them, not on a set
      // (docs/sharing.md): no NVLink set is offered, none stranded; k-GPU pods still fit.
      health.nvlinkSets[i] = 0;
      health.stranded[i] = 0;
      health.hostable[i] = state.freeCount / k;
    }
  }
  health.approximate = sets.approximate();
  health.strandedMigSlices = strandedMigSlices(state);
  for (const int size : kFragmentationSizes) {
    health.unusableGpus +=
        unusableFreeGpus(state, size, state.freeCount, state.largestNvlinkClique);
  }
  if (sharesGpus(state)) addSharedGpus(state, health);
  addSharedMig(state, health);
  addMarkedHardware(state, health);
  for (int k = 2; k <= kMaxOfferedGpus && k <= state.freeCount && !sharesGpus(state); ++k) {
    const GpuPick& pick = state.devicePluginPicks[static_cast<std::size_t>(k)];
    health.offered[static_cast<std::size_t>(k)] = SetQuality{pick.weakest, pick.bandwidthGBps};
  }
  return health;
}

namespace {

// Per k, the highest bandwidth and the best class of either.
void keepBest(OfferedSets& best, const OfferedSets& offered) noexcept {
  for (std::size_t k = 0; k < best.size(); ++k) {
    best[k].bandwidthGBps = std::max(best[k].bandwidthGBps, offered[k].bandwidthGBps);
    best[k].weakest = std::max(best[k].weakest, offered[k].weakest);
  }
}

}  // namespace

void HealthTotals::add(const NodeHealth& node) noexcept {
  ++nodes;
  approximateNodes += node.approximate ? 1 : 0;
  addCounts(node);
  keepBest(bestOffered, node.offered);
}

std::int64_t HealthTotals::sharedTenantsAt(double q) const noexcept {
  if (sharedGpus <= 0) return 0;
  // At least q of the GPUs, rounded up: the 95th percentile of 20 GPUs is the 19th.
  const auto wanted = static_cast<std::int64_t>(std::ceil(q * static_cast<double>(sharedGpus)));
  std::int64_t seen = 0;
  for (std::size_t t = 0; t < kTenantBuckets; ++t) {
    seen += sharedGpusByTenants[t];
    if (seen >= std::max<std::int64_t>(1, wanted)) return static_cast<std::int64_t>(t);
  }
  return static_cast<std::int64_t>(kTenantBuckets - 1);
}

void HealthTotals::add(const HealthTotals& other) noexcept {
  nodes += other.nodes;
  approximateNodes += other.approximateNodes;
  addCounts(other);
  keepBest(bestOffered, other.bestOffered);
}

}  // namespace gte
