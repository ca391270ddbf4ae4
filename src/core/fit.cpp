#include "core/fit.h"

#include <algorithm>
#include <bit>
#include <climits>

#include "core/mig_plan.h"
#include "core/predict_allocation.h"
#include "dra_placement/dra_node_state.h"

namespace gte {
namespace {

constexpr FitOutcome kFit{};

FitOutcome reject(Verdict verdict, FitReason reason, int migRequest = -1) {
  return FitOutcome{verdict, reason, migRequest};
}

Verdict unlessEmptyFits(bool fitsWhenEmpty) {
  return fitsWhenEmpty ? Verdict::kUnschedulable : Verdict::kUnresolvable;
}

// Demands the pod makes of links and NUMA that a node without a readable graph cannot vouch for.
FitOutcome checkUnknownTopology(const PodDemand& demand, bool numaKnown, const NodeState& state,
                                const Policy& policy) {
  const bool malformed = state.status == TopologyStatus::kMalformed;
  const auto unknown = [&](FitReason reason) {
    return reject(Verdict::kUnresolvable, malformed ? FitReason::kTopologyMalformed : reason);
  };
  if (demand.minLink && demand.gpus > 1) {
    return unknown(FitReason::kTopologyUnknownMinLink);
  }
  if (demand.singleNuma && !numaKnown) {
    return unknown(FitReason::kTopologyUnknownNuma);
  }
  if (demand.gpus > 1 && !policy.allowMultiGpuOnUnknownTopology) {
    return unknown(FitReason::kTopologyUnknownMultiGpu);
  }
  return kFit;
}

// A shared node (docs/sharing.md): the pod's nvidia.com/gpu are replicas, so what bounds it is
// the replicas left, not free whole GPUs (a GPU with tenants stays free for more). Link and NUMA
// demands were refused before (sharingRefusal).
FitOutcome filterReplicas(const PodDemand& demand, const NodeState& state, const Policy& policy) {
  const std::int64_t k = demand.gpus;
  if (state.usableCount == 0) return reject(Verdict::kUnresolvable, FitReason::kNoGpus);
  if (!state.linksKnown()) {
    const bool numaKnown = state.status == TopologyStatus::kKnown;
    if (const FitOutcome outcome = checkUnknownTopology(demand, numaKnown, state, policy);
        !outcome.fits()) {
      return outcome;
    }
  }
  if (state.replicasFree(k)) return kFit;
  // Emptied of pods, the node offers every usable GPU's replicas (or its allocatable).
  const int perGpu = state.sharing.replicas;
  const std::int64_t total =
      perGpu > 0 ? std::int64_t{perGpu} * state.usableCount : state.advertisedGpus();
  FitOutcome out = reject(unlessEmptyFits(k <= total), FitReason::kInsufficientFreeReplicas);
  out.sharing = state.sharing.strategy;
  out.replicas = state.sharing.replicas;
  return out;
}

FitOutcome filterWholeGpus(const PodDemand& demand, const NodeState& state, const Policy& policy) {
  const std::int64_t k = demand.gpus;
  if (state.allocator == GpuAllocator::kDra && state.dra) {
    // A DRA node: nvidia.com/gpu is a claim of the class backing it. Without one the scheduler
    // cannot fit the pod here; when that class cannot be evaluated the extender says nothing.
    if (state.dra->plainUninterpretable) return kFit;
    if (state.dra->plainClass < 0) return reject(Verdict::kUnresolvable, FitReason::kNoGpus);
  }
  if (state.sharesGpus) return filterReplicas(demand, state, policy);
  if (k > state.usableCount) {
    return reject(Verdict::kUnresolvable,
                  state.usableCount == 0 ? FitReason::kNoGpus : FitReason::kTooFewGpus);
  }
  if (!state.linksKnown()) {
    // Known labels without link strings still know NUMA; only link demands are undecidable.
    const bool numaKnown = state.status == TopologyStatus::kKnown;
    if (const FitOutcome outcome = checkUnknownTopology(demand, numaKnown, state, policy);
        !outcome.fits()) {
      return outcome;
    }
  }
  // The empty-node table is a separate allocation: read it only on the paths that refuse, so
  // that the common "fits" answer costs one cache miss per node (the state), not two.
  const auto capacity = [&state, k]() -> const CapacityOptions& {
    return (*state.capacity)[static_cast<std::size_t>(k)];
  };
  if (k > state.freeCount) {
    if (demand.singleNuma && !capacity().numaAlignedPossible) {
      return reject(Verdict::kUnresolvable, FitReason::kNoSingleNumaSet);
    }
    return reject(Verdict::kUnschedulable, FitReason::kInsufficientFreeGpus);
  }
  const GpuPick* pick = wholeGpuPick(demand, state);
  if (pick == nullptr) {
    // Only the NUMA-aligned pick can be missing when enough GPUs are free.
    return reject(unlessEmptyFits(capacity().numaAlignedPossible), FitReason::kNoSingleNumaSet);
  }
  if (demand.minLink && k > 1 && pick->weakest < *demand.minLink) {
    const LinkClass emptyWeakest =
        demand.singleNuma ? capacity().numaAlignedWeakest : capacity().devicePluginWeakest;
    return reject(unlessEmptyFits(emptyWeakest >= *demand.minLink), FitReason::kLinkTooWeak);
  }
  return kFit;
}

FitOutcome filterMig(const PodDemand& demand, const NodeState& state) {
  if (state.status == TopologyStatus::kKnown) {
    if (!state.migProduct) {
      return reject(Verdict::kUnresolvable, FitReason::kMigUnsupportedModel, 0);
    }
    for (std::size_t r = 0; r < demand.mig.size(); ++r) {
      if (state.migFit(demand.mig[r].profile) == nullptr) {
        return reject(Verdict::kUnresolvable, FitReason::kMigProfileUnknown, static_cast<int>(r));
      }
    }
  }
  const MigPlan plan = planMig(demand.mig, state, false);
  if (!plan.fits) {
    return reject(unlessEmptyFits(!plan.unresolvable), FitReason::kMigNoPlacement,
                  plan.failedRequest);
  }
  return kFit;
}

// Whether every pair of `gpus` is NVLink-connected (false where links are unknown).
bool allNvlinked(const GpuTopology& topology, GpuMask gpus) {
  if (!topology.linksKnown) return false;
  for (GpuMask a = gpus; a != 0; a &= a - 1) {
    for (GpuMask b = a & (a - 1); b != 0; b &= b - 1) {
      if (topology.linkClass(std::countr_zero(a), std::countr_zero(b)) != LinkClass::kNvlink) {
        return false;
      }
    }
  }
  return true;
}

}  // namespace

std::optional<FitOutcome> replicasOnRefusal(const PodDemand& demand, const NodeState& state) {
  const std::int64_t k = demand.gpus;
  if (demand.replicasOn == ReplicasOn::kAny || k <= 1) return std::nullopt;
  FitOutcome out;
  out.verdict = Verdict::kUnresolvable;
  out.sharing = state.sharesGpus ? state.sharing.strategy : SharingStrategy::kNone;
  out.replicas = state.sharesGpus ? state.sharing.replicas : 0;
  if (!state.sharesGpus) {
    if (demand.replicasOn == ReplicasOn::kDistinct) return std::nullopt;  // whole GPUs are
    out.reason = FitReason::kReplicasNotSame;
    return out;
  }
  // The free GPUs that still have a replica to give, and the lowest tenant count among them (masks:
  // the fit check allocates nothing per node).
  const int perGpu = state.sharing.replicas;
  GpuMask open = 0;
  int least = INT_MAX;
  for (GpuMask rest = state.freeMask; rest != 0; rest &= rest - 1) {
    const int gpu = std::countr_zero(rest);
    const int tenants = state.tenantsOf(gpu);
    if (perGpu > 0 && tenants >= perGpu) continue;
    open |= GpuMask{1} << gpu;
    least = std::min(least, tenants);
  }
  if (demand.replicasOn == ReplicasOn::kSame) {
    const bool one = std::popcount(open) == 1 && perGpu > 0 &&
                     perGpu - state.tenantsOf(std::countr_zero(open)) >= k;
    if (one) return std::nullopt;
    out.reason = FitReason::kReplicasNotSame;
    // Emptied, the node offers every GPU's replicas: one GPU only on a one-GPU node.
    if (state.usableCount == 1 && perGpu >= k) out.verdict = Verdict::kUnschedulable;
    return out;
  }
  GpuMask quietest = 0;
  for (GpuMask rest = open; rest != 0; rest &= rest - 1) {
    const int gpu = std::countr_zero(rest);
    if (state.tenantsOf(gpu) == least) quietest |= GpuMask{1} << gpu;
  }
  if (std::popcount(quietest) >= k && allNvlinked(state.topology, quietest)) return std::nullopt;
  out.reason = FitReason::kReplicasNotDistinct;
  // Emptied, every usable GPU has no tenant: distinct then holds when they are k or more and
  // NVLink-connected pairwise.
  if (state.usableCount >= k && allNvlinked(state.topology, state.usableMask)) {
    out.verdict = Verdict::kUnschedulable;
  }
  return out;
}

namespace {

// The resource the pod's GPUs are asked by against the one the node advertises: the device
// plugin's renamed replicas (nvidia.com/gpu.shared) or nvidia.com/gpu (docs/sharing.md).
std::optional<FitOutcome> resourceRefusal(const PodDemand& demand, const NodeState& state) {
  if (demand.gpus <= 0) return std::nullopt;
  if (demand.sharedResource && state.allocatableSharedGpus <= 0) {
    return reject(Verdict::kUnresolvable, FitReason::kNoSharedResource);
  }
  if (!demand.sharedResource && state.allocatableSharedGpus > 0 && state.allocatableGpus < 0) {
    return reject(Verdict::kUnresolvable, FitReason::kGpusRenamedShared);
  }
  return std::nullopt;
}

}  // namespace

std::optional<FitOutcome> migSharingRefusal(const PodDemand& demand,
                                            const NodeState& state) noexcept {
  if (demand.isolation != Isolation::kExclusive || state.sharedMig == nullptr) return std::nullopt;
  for (std::size_t i = 0; i < demand.mig.size(); ++i) {
    if (const GpuSharing* shared = state.migSharing(demand.mig[i].profile)) {
      FitOutcome out;
      out.verdict = Verdict::kUnresolvable;
      out.reason = FitReason::kMigShared;
      out.migRequest = static_cast<int>(i);
      out.sharing = shared->strategy;
      out.replicas = shared->replicas;
      return out;
    }
  }
  return std::nullopt;
}

FitOutcome checkFit(const PodDemand& demand, const NodeState& state, const Policy& policy) {
  if (const auto refused = resourceRefusal(demand, state)) return *refused;
  if (const auto refused = sharingRefusal(demand, state)) return *refused;
  if (!demand.mig.empty()) {
    if (const auto refused = migSharingRefusal(demand, state)) return *refused;
  }
  if (const auto refused = replicasOnRefusal(demand, state)) return *refused;
  if (demand.gpus > 0) {
    if (const FitOutcome outcome = filterWholeGpus(demand, state, policy); !outcome.fits()) {
      return outcome;
    }
  }
  if (!demand.mig.empty()) {
    return filterMig(demand, state);
  }
  return kFit;
}

}  // namespace gte
