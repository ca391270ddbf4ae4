#include "core/score_node.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <span>
#include <vector>

#include "core/fit.h"
#include "core/fragmentation.h"
#include "core/mig_plan.h"
#include "core/predict_allocation.h"
#include "core/replica_landing.h"
#include "core/scarce_sets.h"
#include "dra_placement/dra_node_state.h"

namespace gte {
namespace {

constexpr int kHalf = kTermScale / 2;

// Link quality of the set the pod gets, by the weakest pair: 6 tiers of 200 from unknown (0) to
// NVLink (1200). Same-board pairs rank with PIX: both mean one PCIe switch or closer.
int linkTier(LinkClass weakest) {
  switch (weakest) {
    case LinkClass::kNvlink:
      return 6;
    case LinkClass::kSameBoard:
    case LinkClass::kPix:
      return 5;
    case LinkClass::kPxb:
      return 4;
    case LinkClass::kPhb:
      return 3;
    case LinkClass::kNode:
      return 2;
    case LinkClass::kSys:
      return 1;
    case LinkClass::kUnknown:
      return 0;
  }
  return 0;
}

int numaTerm(const GpuPick& pick, const NodeState& state) {
  if (pick.singleNuma) {
    return kTermScale;
  }
  if ((pick.gpus & state.numaUnknownGpus) != 0) {
    return kHalf;  // cannot tell: between "local" and "spans NUMA nodes"
  }
  return 0;
}

// Preservation points per GPU made unusable for one request size.
constexpr int kFragmentationCost = 25;

// Binpack: half fullness after placement, half preservation. Preservation follows the change of
// fragmentation in the spirit of FGD: delta = summed over the request sizes, the free GPUs that
// size cannot use after placement minus before. It is negative when the pod takes GPUs the sizes
// could not use well anyway (a leftover GPU, a broken NVLink set) and positive when it breaks a
// set a larger request needed. preservation = 300 - 25 x delta, clamped to 0..600: one GPU made
// unusable for one size costs 25 (0.6 points at the default weight). Spread: only emptiness after
// placement.
int wholePackingTerm(const PodDemand& demand, int k, const GpuPick& pick, const NodeState& state) {
  if (state.gpuCount == 0) {
    return kHalf;
  }
  const int freeAfter = state.freeCount - k;
  if (demand.strategy == Strategy::kSpread) {
    return kTermScale * freeAfter / state.gpuCount;
  }
  const int fullness = kHalf * (state.gpuCount - freeAfter) / state.gpuCount;
  if (state.capacity == nullptr) {
    return fullness + kHalf / 2;
  }
  int delta = 0;
  for (const int size : kFragmentationSizes) {
    delta += unusableFreeGpus(state, size, freeAfter, pick.largestNvlinkCliqueAfter) -
             unusableFreeGpus(state, size, state.freeCount, state.largestNvlinkClique);
  }
  return fullness + std::clamp(kHalf / 2 - kFragmentationCost * delta, 0, kHalf);
}

// MIG: half fullness of the node's MIG slices after placement (binpack) or emptiness (spread),
// half the placement quality (how much placement value the instances leave open).
int migPackingTerm(const PodDemand& demand, const MigPlan& plan, const NodeState& state) {
  const int total = state.migSlicesTotal;
  const int fullness =
      total == 0 ? kHalf / 2
                 : kHalf * std::min(total, state.migSlicesInUse + plan.slicesTaken) / total;
  const int quality = kHalf * plan.qualityPermille / 1000;
  return (demand.strategy == Strategy::kBinpack ? fullness : kHalf - fullness) + quality;
}

// A shared node (docs/sharing.md): the device plugin's allocator for replicas takes them one by
// one, each from the GPU with the fewest replicas in use, counting the ones it just took. The
// load is the tenants the pod joins that way over what its replicas' GPUs hold at most (replicas
// per GPU; without a known count, 4 or one more than the busiest GPU). spread: the emptier, the
// higher; pack: the fuller, the higher, and never below half: pack fills shared GPUs before it
// opens whole ones, so a shared node with a free replica ranks with the fullest whole nodes.
int sharedPackingTerm(const PodDemand& demand, int k, const NodeState& state) {
  if (k <= 0) return kHalf;
  const ReplicaLanding landing = landReplicas(state, k);
  // The tenants the replicas join: a GPU at t that takes c replicas is joined at t, t+1, ...,
  // t+c-1; each undecided replica joins one of the tied GPUs, all at one level.
  std::int64_t joined = 0;
  int busiest = 0;
  int tiedLevel = 0;
  bool any = false;
  for (GpuMask rest = state.freeMask; rest != 0; rest &= rest - 1) {
    const int gpu = std::countr_zero(rest);
    if (gpu >= kMaxGpus) break;
    const int t = state.tenantsOf(gpu);
    const int c = landing.certain[static_cast<std::size_t>(gpu)];
    joined += std::int64_t{c} * t + std::int64_t{c} * (c - 1) / 2;
    if ((landing.tied >> gpu & 1U) != 0) tiedLevel = t + c;
    busiest = std::max(busiest, t);
    any = any || c > 0 || (landing.tied >> gpu & 1U) != 0;
  }
  if (!any) return kHalf;  // no GPU with a replica left
  joined += std::int64_t{landing.undecided} * tiedLevel;
  const int known = state.sharing.replicas;
  const int perGpu = known > 0 ? known : std::max(4, busiest + 1);
  const std::int64_t room = static_cast<std::int64_t>(k) * std::max(1, perGpu - 1);
  const int load = static_cast<int>(std::min<std::int64_t>(kTermScale, kTermScale * joined / room));
  return demand.sharedPlacement == SharedPlacement::kPack ? kHalf + load / 2 : kTermScale - load;
}

}  // namespace

void wholeGpuTerms(const PodDemand& demand, int k, const GpuPick& pick, const NodeState& state,
                   ScoreTerms& terms) {
  if (state.sharesGpus) {
    // The device plugin hands out replicas by tenants per GPU, not a set (docs/sharing.md): their
    // links and NUMA node are not known, as on a node whose topology is unknown, except that one
    // replica is on one GPU, so in one NUMA node where the node's are known (as one whole GPU);
    // packing follows the tenants the pod's replicas would join; no set is broken.
    terms.linkQuality =
        termValue(k == 1 ? kTermScale : linkTier(LinkClass::kUnknown) * kTermScale / 6);
    const bool numaKnown = (state.numaUnknownGpus & state.usableMask) == 0;
    terms.numaLocality = termValue(k == 1 && numaKnown ? kTermScale : kHalf);
    terms.packing = termValue(sharedPackingTerm(demand, k, state));
    terms.brokenSets = 0;
    return;
  }
  // A set holding a degraded GPU or link is scored as that pair's PCIe class (docs/health.md).
  const LinkClass scored = scoredWeakest(state.avoided, state.topology, pick.gpus, pick.weakest);
  terms.linkQuality = termValue(k == 1 ? kTermScale : linkTier(scored) * kTermScale / 6);
  terms.numaLocality = termValue(numaTerm(pick, state));
  // sharing.placement pack fills shared GPUs before it opens whole ones: whole GPUs' packing
  // counts in the lower half, below every shared node with a free replica (sharedPackingTerm).
  const int packing = wholePackingTerm(demand, k, pick, state);
  terms.packing =
      termValue(demand.sharedPlacement == SharedPlacement::kPack ? packing / 2 : packing);
  terms.brokenSets = brokenSetSizes(state, k, pick);
}

int migDevicePackingTerm(const PodDemand& demand, int inUse, int taken, int total) {
  const int fullness = total == 0 ? kHalf / 2 : kHalf * std::min(total, inUse + taken) / total;
  // Existing devices block no placement: the quality half is full.
  return (demand.strategy == Strategy::kBinpack ? fullness : kHalf - fullness) + kHalf;
}

ScoreTerms scoreTerms(const PodDemand& demand, const NodeState& state) {
  ScoreTerms terms;
  // Shared GPUs the pod refuses (exclusive, links, replicas-on): no placement.
  if (anySharingRefusal(demand, state) || replicasOnRefusal(demand, state)) return ScoreTerms{};
  if (state.allocator == GpuAllocator::kDra && state.dra && state.dra->plainUninterpretable &&
      demand.gpus > 0) {
    return ScoreTerms{};  // the DRA allocator's pick cannot be told: no claim about the node
  }
  if (demand.gpus > 0) {
    // Replicas of shared GPUs land on no set (wholeGpuTerms reads the tenants), however many
    // GPUs are free.
    static constexpr GpuPick kReplicas{};
    const GpuPick* pick = state.sharesGpus ? &kReplicas : wholeGpuPick(demand, state);
    if (pick == nullptr) {
      return ScoreTerms{};
    }
    wholeGpuTerms(demand, static_cast<int>(demand.gpus), *pick, state, terms);
  }
  if (!demand.mig.empty()) {
    const MigPlan plan = planMig(demand.mig, state, false);
    if (!plan.fits) {
      return ScoreTerms{};
    }
    terms.migFit = termValue(plan.qualityPermille * kTermScale / 1000);
    if (demand.gpus == 0) {
      terms.packing = termValue(migPackingTerm(demand, plan, state));
    }
  }
  return terms;
}

int scoreNode(const PodDemand& demand, const NodeState& state, const Policy& policy) {
  return weightedScore(scoreTerms(demand, state), policy);
}

int weightedScore(const ScoreTerms& terms, const Policy& policy) {
  long weighted = 0;
  long weights = 0;
  const auto add = [&](int term, int weight) {
    if (term >= 0) {
      weighted += static_cast<long>(term) * weight;
      weights += weight;
    }
  };
  add(terms.linkQuality, policy.weights.linkQuality);
  add(terms.numaLocality, policy.weights.numaLocality);
  add(terms.packing, policy.weights.packing);
  add(terms.migFit, policy.weights.migFit);
  if (weights == 0) {
    return 0;
  }
  const long denominator = weights * kTermScale;
  const auto score = static_cast<int>((weighted * kMaxNodeScore + denominator / 2) / denominator);
  // Every term is within [0, kTermScale], so this holds by construction; the clamp keeps a broken
  // term from ever reaching the wire out of range in release builds.
  assert(score >= 0 && score <= kMaxNodeScore);
  return score < 0 ? 0 : score > kMaxNodeScore ? kMaxNodeScore : score;
}

}  // namespace gte
