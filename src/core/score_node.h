#pragma once
// Ranks a node for a pod by the GPUs it would really get there (docs/scoring.md). Pure: no I/O,
// clock, locks or globals. Scores are 0..100; prioritizeNodes (src/prioritize) maps one request's
// candidates onto kube-scheduler's 0..10 (wireScores).
#include <cstdint>

#include "core/node_state.h"
#include "core/pod_demand.h"
#include "policy/policy.h"

namespace gte {

inline constexpr int kMaxNodeScore = 100;

// Each term in [0, kTermScale]; -1 when it does not apply to the pod.
inline constexpr int kTermScale = 1200;  // divisible by 6 link tiers and by 2, so steps are exact

// 12 bytes: prioritize keeps one per candidate of a request (5,000 in a large cluster).
struct ScoreTerms {
  std::int16_t linkQuality = -1;
  std::int16_t numaLocality = -1;
  std::int16_t packing = -1;
  std::int16_t migFit = -1;
  // Scarce sets (core/scarce_sets.h): bit i, the pod's whole GPUs would break the node's free
  // all-NVLink set of kScarceSetSizes[i] GPUs; and the points that costs the node's score, which
  // decide() sets from the cluster's counts (0 until then).
  std::uint16_t brokenSets = 0;  // 16 bits like its neighbours: copied whole, never byte by byte
  std::int16_t scarceSetPoints = 0;

  // A term applies exactly when the node offers the pod a placement: every fitting pod gets a
  // packing term (whole GPUs) or a migFit term (MIG).
  bool fits() const noexcept { return packing >= 0 || migFit >= 0; }
};

// A term's value as ScoreTerms keeps it (every term is in -1..kTermScale).
constexpr std::int16_t termValue(int value) noexcept {
  return static_cast<std::int16_t>(value);
}

// The terms behind scoreNode(); all -1 when the node does not fit.
ScoreTerms scoreTerms(const PodDemand& demand, const NodeState& state);

// The link, NUMA and packing terms of taking the `k` whole GPUs of `pick` on the node (scoreTerms
// for a device-plugin pick, the DRA decision for the set a claim gets).
void wholeGpuTerms(const PodDemand& demand, int k, const GpuPick& pick, const NodeState& state,
                   ScoreTerms& terms);

// The packing term of taking `taken` of a node's `total` existing MIG devices (`inUse` already
// taken): fullness after placement (binpack) or emptiness (spread), plus a full quality half
// (an existing device blocks no placement).
int migDevicePackingTerm(const PodDemand& demand, int inUse, int taken, int total);

// 0..100: the weighted mean of the applicable terms, rounded. 0 when the node does not fit or the
// pod asks for no GPUs. With the default weights a one-tier better link class, or a node where a
// small pod breaks no all-NVLink set, is worth at least 10 points.
int scoreNode(const PodDemand& demand, const NodeState& state, const Policy& policy);

// The 0..100 weighted mean of the terms that apply (scoreNode from precomputed terms).
int weightedScore(const ScoreTerms& terms, const Policy& policy);

}  // namespace gte
