#include "core/node_state.h"

#include <algorithm>
#include <bit>
#include <cstdint>

#include "core/node_charges.h"
#include "core/replica_landing.h"
#include "dra_placement/dra_node_state.h"
#include "model/gpu_request.h"
#include "topology/best_set.h"
#include "topology/device_plugin_pick.h"
#include "topology/gpu_graph.h"
#include "topology/link_bandwidth.h"
#include "topology/mig_sharing.h"
#include "topology/nvlink_clique.h"
#include "topology/pair_table.h"
#include "topology/topology_labels.h"

namespace gte {
namespace {

std::int64_t allocatableOf(const NodeInfo& node, std::string_view resource) {
  const Quantity* quantity = node.allocatable.find(resource);
  return quantity == nullptr ? -1 : quantity->wholeUnits().value_or(0);
}

// Reads the topology; malformed labels-v1 fall back to the counts other sources give.
void readInto(NodeState& state, const NodeInfo& node, const Policy& policy) {
  const bool labelsV1 = hasLabelsV1(node, policy);
  Result<GpuTopology> topology = readTopology(node, policy);
  if (topology.ok()) {
    state.status = labelsV1 ? TopologyStatus::kKnown : TopologyStatus::kUnknown;
    state.topology = std::move(topology).value();
    return;
  }
  // Unreadable either way: malformed labels-v1, or (without them) a fallback count that does not
  // read (GPU Feature Discovery's `nvidia.com/gpu.count: lots`, a negative allocatable). Both are
  // kMalformed, so the cache logs and counts them; the node then has the fallback's counts (none
  // when the fallback itself is what does not read).
  state.status = TopologyStatus::kMalformed;
  state.topologyError = topology.error().message;
  Result<GpuTopology> fallback = readFallbackTopology(node);
  if (fallback.ok()) {
    state.topology = std::move(fallback).value();
  }
}

// The shared MIG profiles of the state (NodeState::sharedMig) by profile code (none without a
// product table entry or shared profiles).
MigReplicas migReplicasOf(const std::shared_ptr<const std::vector<SharedMigProfile>>& sharedMig,
                          const MigProduct* product) {
  if (!sharedMig || product == nullptr) return {};
  return migReplicasByCode(*sharedMig, *product);
}

// Replicas per device of the profile `code`; 0 where it is not shared or its count is not known
// (a device with a tenant then reads used).
int replicasOf(const MigReplicas& replicas, char code) {
  const auto found = replicas.find(code);
  return found == replicas.end() ? 0 : found->second;
}

// The labels' in-use GPUs and MIG instances named in `released` become free. Only devices the
// labels mark as used change: a GPU in MIG mode stays in MIG mode, an unknown start frees nothing.
void markReleased(GpuTopology& topology, const NodeUsage& released, const Policy& policy,
                  const std::shared_ptr<const std::vector<SharedMigProfile>>& sharedMig) {
  for (const int gpu : released.gpus) {
    const auto at = static_cast<std::size_t>(gpu);
    if (gpu >= 0 && at < topology.used.size() && topology.used[at] == GpuUse::kAllocated) {
      topology.used[at] = GpuUse::kFree;
    }
  }
  // Replicas of shared GPUs name no GPU: they leave the busiest ones, the inverse of how the
  // device plugin lays them.
  for (const int replicas : released.replicas) {
    for (int i = 0; i < replicas; ++i) {
      const auto busiest = std::max_element(topology.tenants.begin(), topology.tenants.end());
      if (busiest == topology.tenants.end() || *busiest == 0) break;
      --*busiest;
    }
  }
  const MigProduct* product = findMigProduct(policy.migProducts, topology.model);
  const MigReplicas replicasByCode = migReplicasOf(sharedMig, product);
  for (const MigInstanceRef& ref : released.mig) {
    const auto at = static_cast<std::size_t>(ref.gpu);
    if (ref.gpu < 0 || at >= topology.migInstances.size() || ref.start < 0) continue;
    const MigProfile* profile = product ? product->findByName(ref.profile) : nullptr;
    for (MigInstance& instance : topology.migInstances[at]) {
      const bool sameProfile = profile == nullptr || instance.profileCode == profile->code;
      if (instance.start != ref.start || !sameProfile) continue;
      // A shared device gives one replica back: from all held, one is free again.
      const int replicas = replicasOf(replicasByCode, instance.profileCode);
      if (instance.state == MigInstanceState::kUsed) {
        instance.state = MigInstanceState::kFree;
        instance.heldReplicas = static_cast<std::uint8_t>(replicas > 1 ? replicas - 1 : 0);
      } else if (instance.state == MigInstanceState::kFree && instance.heldReplicas > 0) {
        --instance.heldReplicas;
      }
    }
  }
}

class NodeStateBuilder {
 public:
  NodeStateBuilder(NodeState& state, const NodeUsage& usage, const Policy& policy,
                   const NodeState* sameLabels)
      : state_(state),
        usage_(usage),
        policy_(policy),
        sameLabels_(sameLabels),
        topo_(state.topology),
        graph_(state.topology, policy.linkScores),
        table_(graph_.pairTable()),
        bandwidths_(state.topology) {}

  void build() {
    GpuMask degraded = 0;
    for (int gpu = 0; gpu < std::min(topo_.gpuCount, kMaxGpus); ++gpu) {
      if (state_.gpuHealth(gpu) == GpuHealth::kDegraded) degraded |= bitOf(gpu);
    }
    state_.avoided = avoidedPairs(topo_, policy_.health, degraded);
    if (state_.dra) {
      state_.nvlinkNeighbours = table_.nvlinkNeighbours;
    }
    computeFreeGpus();
    computeTenants();
    computeWholeOptions();
    computeCapacity();
    computeScoringFacts();
    computeMig();
    computeChain();
    state_.devicePluginApproximate = pickBudget_.approximate;
  }

 private:
  bool dra() const noexcept { return state_.allocator == GpuAllocator::kDra; }

  // Failed and cordoned GPUs never are; degraded ones unless the policy refuses them.
  bool allocatable(GpuHealth health) const noexcept {
    return health == GpuHealth::kHealthy ||
           (health == GpuHealth::kDegraded && degradedGpuUsable(policy_.health));
  }

  // The GPUs the DRA allocator could hand out for nvidia.com/gpu (the plain order), or, when no
  // class backs it there, every GPU of a whole-GPU device (claims may still take them); and those
  // no claim holds. Labels that mark a GPU allocated keep it taken, and so does the usage the
  // state is built with: pods' charges are not in it (the claims already count the GPUs of pods
  // placed through DRA, draUsage), but a group's holds and the GPUs a what-if, a simulator or the
  // group planner takes for the pods it places one after another are.
  void computeDraGpus() {
    const DraNodeState& dra = *state_.dra;
    const int n = topo_.gpuCount;
    GpuMask offered = 0;
    if (dra.plainClass >= 0) {
      for (const int gpu : dra.plainOrder)
        offered |= gpu < n ? bitOf(gpu) : 0;
    } else {
      for (const dra::DeviceGpu& device : dra.deviceGpus) {
        const int gpu = device.gpu;
        if (gpu >= 0 && gpu < n && device.role == dra::DeviceRole::kWholeGpu) {
          offered |= bitOf(gpu);
        }
      }
    }
    GpuMask labelsUsed = 0;
    for (int gpu = 0; gpu < n; ++gpu) {
      if (topo_.used[static_cast<std::size_t>(gpu)] == GpuUse::kAllocated) labelsUsed |= bitOf(gpu);
    }
    // Usable: what the allocator could hand out with no claim holding anything (preemption's
    // bound); free: what it hands out now.
    state_.usableMask = offered & ~dra.plainBlocked;
    GpuMask usageTaken = 0;
    for (const int gpu : usage_.gpus)
      usageTaken |= gpu >= 0 && gpu < n ? bitOf(gpu) : 0;
    state_.freeMask =
        state_.usableMask & ~dra.plainTaken & ~dra.gpusInUse & ~labelsUsed & ~usageTaken;
  }

  // The DRA allocator's pick: the first k free GPUs of the plain order (the device plugin's pick
  // is not an order; callers use predictDevicePluginPick then).
  GpuMask firstInDraOrder(GpuMask available, int k) const {
    return gte::firstInDraOrder(state_.dra->plainOrder, available, k);
  }

  GpuMask allocatorPick(GpuMask available, int k) {
    return dra() ? firstInDraOrder(available, k)
                 : predictDevicePluginPick(table_, available, 0, k, &pickBudget_);
  }

  // DRA has no Topology Manager: a single-NUMA pod gets the DRA pick when it lies in one node.
  GpuMask alignedPick(GpuMask available, int k) {
    if (!dra()) return numaAlignedPick(available, k);
    const GpuMask pick = firstInDraOrder(available, k);
    return table_.singleNuma(pick) ? pick : 0;
  }

  void computeFreeGpus() {
    const int n = topo_.gpuCount;
    state_.gpuCount = n;
    if (dra()) {
      computeDraGpus();
      finishFreeGpus();
      return;
    }
    for (int gpu = 0; gpu < n; ++gpu) {
      const auto at = static_cast<std::size_t>(gpu);
      if (allocatable(topo_.health[at]) && topo_.used[at] != GpuUse::kMigMode) {
        state_.usableMask |= bitOf(gpu);
        if (topo_.used[at] == GpuUse::kFree) {
          state_.freeMask |= bitOf(gpu);
        }
      }
    }
    for (int gpu : usage_.gpus) {
      if (gpu >= 0 && gpu < n) {
        state_.freeMask &= ~bitOf(gpu);
      }
    }
    if (usage_.unknownGpus > 0 && !state_.sharesGpus) {
      // Pods whose GPUs we cannot name got them from the device plugin, so assume its pick (on a
      // shared node they hold replicas: computeTenants).
      const int taken = static_cast<int>(std::min<std::int64_t>(usage_.unknownGpus, kMaxGpus));
      const GpuMask pick =
          taken >= gpuCountOf(state_.freeMask)
              ? state_.freeMask
              : predictDevicePluginPick(table_, state_.freeMask, 0, taken, &pickBudget_);
      state_.freeMask &= ~pick;
    }
    finishFreeGpus();
  }

  // Shared GPUs: the agent's tenants, then the replicas of the pods the usage holds (and of pods
  // it counts by number only), each pod's laid as the plugin's distributed allocation lays them.
  void computeTenants() {
    if (!state_.sharesGpus) return;
    const int n = std::min(topo_.gpuCount, kMaxGpus);
    for (int gpu = 0; gpu < n; ++gpu) {
      state_.tenants[static_cast<std::size_t>(gpu)] =
          static_cast<std::uint8_t>(std::min(topo_.tenantsOf(gpu), 255));
    }
    for (const int replicas : usage_.replicas)
      layReplicas(replicas);
    layReplicas(usage_.unknownGpus);
    const int perGpu = state_.sharing.replicas;
    std::int64_t free = -1;
    if (perGpu > 0) {
      free = 0;
      for (GpuMask rest = state_.freeMask; rest != 0; rest &= rest - 1) {
        free += std::max(0, perGpu - state_.tenantsOf(std::countr_zero(rest)));
      }
    } else if (const std::int64_t advertised = state_.advertisedGpus(); advertised >= 0) {
      std::int64_t held = 0;
      for (const std::uint8_t t : state_.tenants)
        held += t;
      free = std::max<std::int64_t>(0, advertised - held);
    }
    state_.freeReplicas = static_cast<std::int32_t>(std::min<std::int64_t>(free, INT32_MAX));
  }

  // One pod's replicas, laid as the device plugin lays them (core/replica_landing.h); of GPUs
  // tied at the last level the lowest indices take the rest: the counts as a multiset are exact.
  void layReplicas(std::int64_t count) {
    if (count <= 0) return;
    const ReplicaLanding landing = landReplicas(state_, count);
    for (std::size_t gpu = 0; gpu < state_.tenants.size(); ++gpu)
      state_.tenants[gpu] = static_cast<std::uint8_t>(state_.tenants[gpu] + landing.certain[gpu]);
    int left = landing.undecided;
    for (GpuMask rest = landing.tied; rest != 0 && left > 0; rest &= rest - 1, --left)
      ++state_.tenants[static_cast<std::size_t>(std::countr_zero(rest))];
  }

  void finishFreeGpus() {
    state_.usableCount = gpuCountOf(state_.usableMask);
    state_.freeCount = gpuCountOf(state_.freeMask);
    state_.largestNvlinkDomain = largestDomain(state_.freeMask);
    state_.largestNvlinkClique = largestNvlinkClique(table_, state_.freeMask);
  }

  int largestDomain(GpuMask members) const {
    int largest = 0;
    for (GpuMask domain : graph_.nvlinkDomains(members)) {
      largest = std::max(largest, gpuCountOf(domain));
    }
    return largest;
  }

  GpuPick describe(GpuMask free, GpuMask gpus) const {
    GpuPick pick;
    if (gpus == 0) {
      return pick;
    }
    pick.gpus = gpus;
    pick.weakest = topo_.linksKnown        ? table_.weakestLink(gpus)
                   : gpuCountOf(gpus) == 1 ? LinkClass::kNvlink
                                           : LinkClass::kUnknown;
    pick.singleNuma = table_.singleNuma(gpus);
    pick.bandwidthGBps = static_cast<std::uint16_t>(bandwidths_.set(gpus));
    const GpuMask left = free & ~gpus;
    for (GpuMask rest = left; rest != 0; rest &= rest - 1) {
      const GpuMask peers =
          table_.nvlinkNeighbours[static_cast<std::size_t>(std::countr_zero(rest))];
      if ((peers & free) != 0 && (peers & left) == 0) {
        ++pick.stranded;
      }
    }
    pick.largestNvlinkDomainAfter = largestDomain(left);
    pick.largestNvlinkCliqueAfter = largestNvlinkClique(table_, left);
    return pick;
  }

  // NUMA nodes holding GPUs of `members`, ascending; GPUs with unknown NUMA belong to none.
  std::vector<int> numaNodes(GpuMask members) const {
    std::vector<int> nodes;
    for (GpuMask rest = members; rest != 0; rest &= rest - 1) {
      const int numa = table_.numa[static_cast<std::size_t>(std::countr_zero(rest))];
      if (numa >= 0 && std::find(nodes.begin(), nodes.end(), numa) == nodes.end()) {
        nodes.push_back(numa);
      }
    }
    std::sort(nodes.begin(), nodes.end());
    return nodes;
  }

  GpuMask inNuma(GpuMask members, int numa) const {
    GpuMask out = 0;
    for (GpuMask rest = members; rest != 0; rest &= rest - 1) {
      const int gpu = std::countr_zero(rest);
      if (table_.numa[static_cast<std::size_t>(gpu)] == numa) {
        out |= bitOf(gpu);
      }
    }
    return out;
  }

  // The kubelet Topology Manager prefers the narrowest hint, then the lowest NUMA id; the device
  // plugin then picks inside that NUMA node.
  GpuMask numaAlignedPick(GpuMask members, int k) {
    for (int numa : numaNodes(members)) {
      const GpuMask local = inNuma(members, numa);
      if (gpuCountOf(local) >= k) {
        return predictDevicePluginPick(table_, local, 0, k, &pickBudget_);
      }
    }
    return 0;
  }

  GpuSet bestSingleNumaSet(GpuMask members, int k) const {
    GpuSet best;
    for (int numa : numaNodes(members)) {
      const GpuSet candidate = findBestSet(table_, inNuma(members, numa), k);
      if (candidate.gpus != 0 && (best.gpus == 0 || candidate.score > best.score)) {
        best = candidate;
      }
    }
    return best;
  }

  void computeWholeOptions() {
    const GpuMask free = state_.freeMask;
    state_.whole.resize(static_cast<std::size_t>(state_.freeCount) + 1);
    for (int k = 1; k <= state_.freeCount; ++k) {
      WholeGpuOptions& options = state_.whole[static_cast<std::size_t>(k)];
      options.devicePlugin = describe(free, allocatorPick(free, k));
      options.numaAligned = describe(free, alignedPick(free, k));
      const GpuSet best = findBestSet(table_, free, k);
      options.best = describe(free, best.gpus);
      options.bestScore = best.score;
      options.bestSingleNuma = describe(free, bestSingleNumaSet(free, k).gpus);
      if (static_cast<std::size_t>(k) < NodeState::kInlinePicks) {
        state_.devicePluginPicks[static_cast<std::size_t>(k)] = options.devicePlugin;
      }
    }
  }

  void computeCapacity() {
    if (sameLabels_ != nullptr && sameLabels_->capacity &&
        sameLabels_->usableMask == state_.usableMask && sameLabels_->dra == state_.dra) {
      state_.capacity = sameLabels_->capacity;
      return;
    }
    const GpuMask usable = state_.usableMask;
    auto capacity = std::make_shared<std::vector<CapacityOptions>>(
        static_cast<std::size_t>(state_.usableCount) + 1);
    for (int k = 1; k <= state_.usableCount; ++k) {
      CapacityOptions& options = (*capacity)[static_cast<std::size_t>(k)];
      if (state_.freeMask == usable) {
        // Nothing is in use: the empty node is this node, already computed.
        const WholeGpuOptions& now = state_.whole[static_cast<std::size_t>(k)];
        options.devicePluginWeakest = now.devicePlugin.weakest;
        options.numaAlignedPossible = now.numaAligned.gpus != 0;
        options.numaAlignedWeakest = now.numaAligned.weakest;
        continue;
      }
      options.devicePluginWeakest = describe(usable, allocatorPick(usable, k)).weakest;
      const GpuMask aligned = alignedPick(usable, k);
      options.numaAlignedPossible = aligned != 0;
      options.numaAlignedWeakest = describe(usable, aligned).weakest;
    }
    state_.capacity = std::move(capacity);
  }

  void computeScoringFacts() {
    state_.numaUnknownGpus = ~GpuMask{0};
    if (state_.status == TopologyStatus::kKnown) {
      state_.numaUnknownGpus = 0;
      for (int gpu = 0; gpu < 32; ++gpu) {
        const auto at = static_cast<std::size_t>(gpu);
        if (at >= topo_.numa.size() || topo_.numa[at] < 0) state_.numaUnknownGpus |= bitOf(gpu);
      }
    }
    state_.nvlinkWhenEmptySizes = 0;
    if (state_.capacity == nullptr) return;
    const std::vector<CapacityOptions>& capacity = *state_.capacity;
    for (std::size_t size = 2; size < capacity.size() && size < 32; ++size) {
      if (capacity[size].devicePluginWeakest == LinkClass::kNvlink) {
        state_.nvlinkWhenEmptySizes |= std::uint32_t{1} << size;
      }
    }
  }

  void computeChain() {
    std::array<GpuMask, kChainSizes + 1> firstPicks{};
    for (std::size_t k = 1; k < firstPicks.size() && k < state_.whole.size(); ++k) {
      firstPicks[k] = state_.whole[k].devicePlugin.gpus;
    }
    state_.groupChain =
        computeAllocatorChain(table_, state_.freeMask, topo_.linksKnown, firstPicks, &pickBudget_,
                              dra() ? &state_.dra->plainOrder : nullptr);
  }

  void computeMig() {
    state_.dynamicMig = policy_.dynamicMig;
    if (state_.status != TopologyStatus::kKnown) {
      computeFallbackMig();
      return;
    }
    const MigProduct* product = findMigProduct(policy_.migProducts, topo_.model);
    if (product == nullptr) {
      return;
    }
    state_.migProduct = *product;
    const auto n = static_cast<std::size_t>(topo_.gpuCount);
    state_.migUsable.assign(n, false);
    state_.migOccupied.assign(n, 0);
    state_.migFreeInstances.assign(n, {});
    state_.migInstances.assign(n, {});
    tenanted_.assign(n, 0);
    migReplicas_ = migReplicasOf(state_.sharedMig, product);
    for (std::size_t gpu = 0; gpu < n; ++gpu) {
      if (topo_.migMode[gpu] != MigMode::kEnabled || !allocatable(topo_.health[gpu])) {
        continue;
      }
      state_.migUsable[gpu] = true;
      state_.migSlicesTotal += kMigMemorySlices;
      state_.migInstances[gpu] = topo_.migInstances[gpu];
      state_.migOccupied[gpu] = occupiedSlices(topo_.migInstances[gpu], *product);
      for (const MigInstance& instance : topo_.migInstances[gpu]) {
        addFreeEntries(instance, gpu, *product);
      }
    }
    for (const MigInstanceRef& ref : usage_.mig) {
      applyMigUsage(ref, *product);
    }
    for (const MigProfile& profile : product->profiles) {
      state_.migFits.push_back(fitFor(profile, *product));
    }
  }

  // A free instance is one entry of migFreeInstances; a device the device plugin shares, one entry
  // per replica still free, so that each pod's replica takes one (applyMigUsage, planMig). Its
  // slices count in use from its first tenant on; a tenant on a device whose replicas are not
  // known leaves none free.
  void addFreeEntries(const MigInstance& instance, std::size_t gpu, const MigProduct& product) {
    const MigProfile* profile = product.findByCode(instance.profileCode);
    const int replicas = replicasOf(migReplicas_, instance.profileCode);
    int entries = instance.state == MigInstanceState::kFree ? 1 : 0;
    if (entries == 1 && replicas > 1) entries = std::max(0, replicas - instance.heldReplicas);
    if (entries == 1 && replicas <= 1 && instance.heldReplicas > 0) entries = 0;
    for (int e = 0; e < entries; ++e)
      state_.migFreeInstances[gpu].push_back(instance);
    const bool tenanted = instance.state != MigInstanceState::kFree || instance.heldReplicas > 0;
    if (tenanted && profile != nullptr) {
      state_.migSlicesInUse += profile->slices;
      tenanted_[gpu] = static_cast<SliceMask>(tenanted_[gpu] | sliceMask(instance.start, 1));
    }
  }

  void applyMigUsage(const MigInstanceRef& ref, const MigProduct& product) {
    const MigProfile* profile = product.findByName(ref.profile);
    if (profile == nullptr || ref.gpu < 0 || ref.gpu >= topo_.gpuCount) {
      return;
    }
    const auto gpu = static_cast<std::size_t>(ref.gpu);
    if (!state_.migUsable[gpu]) {
      return;
    }
    auto& free = state_.migFreeInstances[gpu];
    const auto existing = std::find_if(free.begin(), free.end(), [&](const MigInstance& i) {
      return i.profileCode == profile->code && (ref.start < 0 || i.start == ref.start);
    });
    if (existing != free.end()) {
      // A replica of a shared device: its slices count once, at its first tenant.
      const SliceMask first = sliceMask(existing->start, 1);
      if ((tenanted_[gpu] & first) == 0) state_.migSlicesInUse += profile->slices;
      tenanted_[gpu] = static_cast<SliceMask>(tenanted_[gpu] | first);
      free.erase(existing);
      return;
    }
    const auto& instances = state_.migInstances[gpu];
    const bool known = std::any_of(instances.begin(), instances.end(), [&](const MigInstance& i) {
      return i.profileCode == profile->code && i.start == ref.start;
    });
    if (known) return;  // a device whose replicas are all taken: nothing more to count
    state_.migSlicesInUse += profile->slices;
    if (ref.start >= 0 && ref.start + profile->slices <= kMigMemorySlices) {
      // A new instance the extender placed (dynamic MIG): its slices are now covered.
      state_.migOccupied[gpu] =
          static_cast<SliceMask>(state_.migOccupied[gpu] | sliceMask(ref.start, profile->slices));
      state_.migInstances[gpu].push_back({profile->code, ref.start, MigInstanceState::kUsed});
    }
  }

  MigProfileFit fitFor(const MigProfile& profile, const MigProduct& product) const {
    MigProfileFit fit;
    fit.profile = profile.name;
    fit.resource = migResourceSuffix(profile.name);
    const auto n = static_cast<std::size_t>(topo_.gpuCount);
    // A free existing instance needs no repartitioning: the first one, or of a shared profile's
    // devices the one with the most replicas free, as the device plugin spreads replicas.
    if (const auto existing = mostFreeMigInstance(state_.migFreeInstances, profile.code)) {
      fit.gpu = existing->first;
      fit.start = existing->second;
      fit.existing = true;
      fit.qualityPermille = 1000;
    }
    for (std::size_t gpu = 0; gpu < n && !fit.possibleWhenEmpty; ++gpu) {
      if (!state_.migUsable[gpu]) {
        continue;
      }
      fit.possibleWhenEmpty =
          policy_.dynamicMig || instanceCount(topo_.migInstances[gpu], profile.code) > 0;
    }
    if (fit.gpu >= 0 || !policy_.dynamicMig) {
      return fit;
    }
    const int emptyValue = placementValue(0, product);
    int bestLoss = 0;
    for (std::size_t gpu = 0; gpu < n; ++gpu) {
      const SliceMask occupied = state_.migOccupied[gpu];
      if (!state_.migUsable[gpu] ||
          instanceCount(state_.migInstances[gpu], profile.code) >= profile.maxInstances) {
        continue;
      }
      const auto placement = bestFreePlacement(occupied, profile, product);
      if (!placement) {
        continue;
      }
      // Least value lost wins: a fragmented GPU gives up less than an empty one, which stays
      // whole for large profiles.
      const int loss = placementValue(occupied, product) - placement->valueAfter;
      if (fit.gpu < 0 || loss < bestLoss) {
        fit.gpu = static_cast<int>(gpu);
        fit.start = placement->start;
        bestLoss = loss;
        fit.qualityPermille = emptyValue == 0 ? 1000 : 1000 - loss * 1000 / emptyValue;
      }
    }
    return fit;
  }

  void computeFallbackMig() {
    state_.migTotalDevices = topo_.migDeviceCounts;
    state_.migFreeDevices = topo_.migDeviceCounts;
    for (const MigInstanceRef& ref : usage_.mig) {
      const std::string resource = migResourceSuffix(ref.profile);
      for (MigDeviceCount& device : state_.migFreeDevices) {
        if (device.profile == resource && device.count > 0) {
          --device.count;
          break;
        }
      }
    }
  }

  NodeState& state_;
  // Per GPU, bit s: the MIG instance starting at memory slice s has a tenant (its slices are in
  // migSlicesInUse).
  std::vector<SliceMask> tenanted_;
  MigReplicas migReplicas_;  // the shared MIG profiles' replicas per device, by profile code
  const NodeUsage& usage_;
  const Policy& policy_;
  const NodeState* sameLabels_;
  const GpuTopology& topo_;
  GpuGraph graph_;
  PairTable table_;
  PairBandwidths bandwidths_;
  // One allowance for all the device-plugin picks of this state: a switch hierarchy of 16 GPUs
  // uses up to ~5,700 groups (~1.3 ms, usage included); a 16-GPU score table with no structure
  // would otherwise cost ~100 ms per state, on the thread that applies the change.
  PickBudget pickBudget_{.groups = kNodeStatePickGroups};
  static constexpr long kNodeStatePickGroups = 10'000;
};

}  // namespace

std::optional<std::pair<int, int>> mostFreeMigInstance(
    const std::vector<std::vector<MigInstance>>& freeInstances, char code) {
  std::optional<std::pair<int, int>> best;
  std::size_t bestEntries = 0;
  for (std::size_t gpu = 0; gpu < freeInstances.size(); ++gpu) {
    const std::vector<MigInstance>& free = freeInstances[gpu];
    // An instance's entries are adjacent (NodeState::migFreeInstances): one pass over the runs.
    for (std::size_t i = 0; i < free.size();) {
      std::size_t end = i + 1;
      while (end < free.size() && free[end].profileCode == free[i].profileCode &&
             free[end].start == free[i].start) {
        ++end;
      }
      if (free[i].profileCode == code && end - i > bestEntries) {
        best = std::make_pair(static_cast<int>(gpu), free[i].start);
        bestEntries = end - i;
      }
      i = end;
    }
  }
  return best;
}

const MigProfileFit* NodeState::migFit(std::string_view resource) const noexcept {
  for (const MigProfileFit& fit : migFits) {
    if (fit.resource == resource || fit.profile == resource) {
      return &fit;
    }
  }
  return nullptr;
}

namespace {

// The node's sharing of nvidia.com/gpu against the GPUs its topology has (core/gpu_sharing.h).
GpuSharing sharingOf(const NodeInfo& node, const NodeState& state, std::string_view labelPrefix) {
  const GpuTopology& topology = state.topology;
  int whole = 0;
  bool migMode = false;
  for (int gpu = 0; gpu < topology.gpuCount; ++gpu) {
    const auto at = static_cast<std::size_t>(gpu);
    const bool mig =
        (at < topology.migMode.size() && (topology.migMode[at] == MigMode::kEnabled ||
                                          topology.migMode[at] == MigMode::kPending)) ||
        (at < topology.used.size() && topology.used[at] == GpuUse::kMigMode);
    migMode = migMode || mig;
    if (!mig) ++whole;
  }
  return readGpuSharing(node, labelPrefix, whole, migMode, state.allocatableGpus);
}

std::shared_ptr<NodeState> readState(const NodeInfo& node, const Policy& policy) {
  auto state = std::make_shared<NodeState>();
  state->name = node.name;
  state->allocatableGpus = allocatableOf(node, kGpuResource);
  state->allocatableSharedGpus = allocatableOf(node, kSharedGpuResource);
  readInto(*state, node, policy);
  state->sharing = sharingOf(node, *state, policy.labelPrefix);
  state->sharesGpus = state->sharing.shared();  // the device plugin's until adoptDra says not
  if (auto shared = readMigSharing(node.labels); !shared.empty()) {
    state->sharedMig = std::make_shared<const std::vector<SharedMigProfile>>(std::move(shared));
  }
  return state;
}

// A new state carrying only what `sameLabels` read from the labels and allocatable.
std::shared_ptr<NodeState> copyRead(const NodeState& sameLabels) {
  auto state = std::make_shared<NodeState>();
  state->name = sameLabels.name;
  state->status = sameLabels.status;
  state->topologyError = sameLabels.topologyError;
  state->topology = sameLabels.topology;
  state->allocatableGpus = sameLabels.allocatableGpus;
  state->allocatableSharedGpus = sameLabels.allocatableSharedGpus;
  state->sharing = sameLabels.sharing;
  state->sharedMig = sameLabels.sharedMig;
  state->dra = sameLabels.publishedDra();
  return state;
}

// A DRA node whose GPUs the labels cannot place (no labels-v1, or a mapping mismatch): the GPUs
// the DRA devices stand for, with links and NUMA unknown, so counts stay right.
void forgetLinks(GpuTopology& topology, int gpus) {
  const int n = std::max(topology.gpuCount, std::min(gpus, kMaxGpus));
  const auto per = static_cast<std::size_t>(n);
  topology.gpuCount = n;
  topology.linksKnown = false;
  topology.nvlinks.assign(static_cast<std::size_t>(pairCount(n)), 0);
  topology.pcie.assign(static_cast<std::size_t>(pairCount(n)), PcieLevel::kUnknown);
  topology.linkHealth.clear();
  topology.numa.assign(per, -1);
  topology.health.resize(per, GpuHealth::kHealthy);
  topology.used.resize(per, GpuUse::kFree);
  topology.migMode.resize(per, MigMode::kDisabled);
  topology.migInstances.resize(per);
}

// On a DRA node the GPUs of `usage` are taken for claims as well: a claim's first-fit skips a
// group's holds and the GPUs of pods placed one after another, as the plain order does.
void takeForClaims(NodeState& state, const NodeUsage& usage) {
  if (state.allocator != GpuAllocator::kDra || usage.gpus.empty()) return;
  GpuMask taken = 0;
  for (const int gpu : usage.gpus)
    taken |= gpu >= 0 && gpu < kMaxGpus ? bitOf(gpu) : 0;
  DraNodeStateConstSharedPtr taking = draStateTaking(state.dra, taken);
  if (taking == state.dra) return;
  state.draPublished = std::move(state.dra);
  state.dra = std::move(taking);
}

// Who hands out nvidia.com/gpu, from the state's DRA state (set by copyRead or the caller).
void adoptDra(NodeState& state) {
  state.allocator = GpuAllocator::kDevicePlugin;
  state.sharesGpus = state.sharing.shared();
  if (!state.dra || !state.dra->handsOutGpus) return;
  state.allocator = GpuAllocator::kDra;
  state.sharesGpus = false;
  int gpus = 0;
  for (const dra::DeviceGpu& device : state.dra->deviceGpus)
    gpus = std::max(gpus, device.gpu + 1);
  if (state.dra->topologyUnknown || state.status != TopologyStatus::kKnown) {
    forgetLinks(state.topology, gpus);
  }
}

}  // namespace

NodeStateConstSharedPtr buildNodeState(const NodeInfo& node, const NodeUsage& usage,
                                       const Policy& policy) {
  auto state = readState(node, policy);
  NodeStateBuilder(*state, usage, policy, nullptr).build();
  return state;
}

NodeStateConstSharedPtr readNodeState(const NodeInfo& node, const Policy& policy) {
  return readState(node, policy);
}

NodeStateConstSharedPtr rebuildNodeState(const NodeState& sameLabels, const NodeUsage& usage,
                                         const Policy& policy, const NodeUsage& released,
                                         DraNodeStateConstSharedPtr dra) {
  auto state = copyRead(sameLabels);
  if (dra) state->dra = std::move(dra);
  adoptDra(*state);
  takeForClaims(*state, usage);
  if (released.empty()) {
    NodeStateBuilder(*state, usage, policy, &sameLabels).build();
  } else {
    markReleased(state->topology, released, policy, state->sharedMig);
    NodeStateBuilder(*state, usage, policy, nullptr).build();
  }
  return state;
}

NodeStateConstSharedPtr chargeNodeState(const NodeState& sameLabels,
                                        std::shared_ptr<const NodeCharges> charges,
                                        const Policy& policy, DraNodeStateConstSharedPtr dra) {
  auto state = copyRead(sameLabels);
  state->dra = std::move(dra);
  adoptDra(*state);
  const NodeUsage none;
  NodeUsage held;
  const NodeUsage* usage = &none;
  if (charges && state->allocator == GpuAllocator::kDra) {
    held = draUsage(*charges);
    usage = &held;
  } else if (charges) {
    usage = &charges->usage();
  }
  takeForClaims(*state, *usage);
  NodeStateBuilder(*state, *usage, policy, &sameLabels).build();
  state->charges = std::move(charges);
  return state;
}

GpuHealth NodeState::gpuHealth(int gpu) const noexcept {
  const auto at = static_cast<std::size_t>(gpu);
  if (gpu < 0 || at >= topology.health.size()) return GpuHealth::kHealthy;
  const GpuHealth mark = topology.health[at];
  const bool warned = dra && gpu < kMaxGpus && (dra->degradedGpus & bitOf(gpu)) != 0;
  return mark == GpuHealth::kHealthy && warned ? GpuHealth::kDegraded : mark;
}

}  // namespace gte
