#pragma once
// Scarce sets (docs/scoring.md, "Scarce sets"): a free all-NVLink set of 2, 4 or 8 GPUs is worth
// more to the cluster the fewer nodes still hold one. A placement that breaks such a set, bigger
// than the pod, on its node costs the node score points in proportion to how few nodes hold a set
// of that size: the policy's `scarceSets.points` for the cluster's last, a tenth of them for the
// tenth. So among nodes that are otherwise equal, the pod leaves the scarcest set whole; the wire
// scale still ranks the best link class first, so a pod never gets a weaker link to spare a set.
// The counts are per snapshot (the builder sums them per shard) or, without a cluster cache, over
// the request's candidates. Pure.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/node_candidate.h"
#include "core/node_state.h"

namespace gte {

// The set sizes weighed; bit i of a size mask is kScarceSetSizes[i].
inline constexpr std::array<int, 3> kScarceSetSizes = {2, 4, 8};

// Whether the node promises sets at all: the device plugin hands out its whole GPUs (not replicas
// of shared ones) and its links are known.
inline bool promisesSets(const NodeState& state) noexcept {
  return !state.sharesGpus && state.linksKnown();
}

// The sizes whose all-NVLink set the node's free GPUs hold now (largest free NVLink clique).
inline std::uint8_t heldSetSizes(const NodeState& state) noexcept {
  if (!promisesSets(state)) return 0;
  std::uint8_t held = 0;
  for (std::size_t i = 0; i < kScarceSetSizes.size(); ++i) {
    if (state.largestNvlinkClique >= kScarceSetSizes[i]) held |= std::uint8_t(1U << i);
  }
  return held;
}

// The sizes bigger than the pod's `k` GPUs whose set the node holds now and would not once `pick`
// is taken.
inline std::uint8_t brokenSetSizes(const NodeState& state, int k, const GpuPick& pick) noexcept {
  const std::uint8_t held = heldSetSizes(state);
  std::uint8_t broken = 0;
  for (std::size_t i = 0; i < kScarceSetSizes.size(); ++i) {
    const int size = kScarceSetSizes[i];
    if ((held >> i & 1U) != 0 && size > k && pick.largestNvlinkCliqueAfter < size) {
      broken |= std::uint8_t(1U << i);
    }
  }
  return broken;
}

struct ScarceSets {
  // Index i: nodes whose free GPUs hold an all-NVLink set of kScarceSetSizes[i] GPUs.
  std::array<std::int64_t, kScarceSetSizes.size()> holders{};

  void add(const NodeState& state) noexcept { addHeld(heldSetSizes(state)); }
  // A node whose held sizes (heldSetSizes) are `held`.
  void addHeld(std::uint8_t held) noexcept {
    for (std::size_t i = 0; i < holders.size(); ++i)
      holders[i] += held >> i & 1U;
  }
  void add(const ScarceSets& other) noexcept {
    for (std::size_t i = 0; i < holders.size(); ++i)
      holders[i] += other.holders[i];
  }
  friend bool operator==(const ScarceSets&, const ScarceSets&) = default;
};

// The counts over a request's candidates (full-Node mode: the request is all the extender sees).
ScarceSets countScarceSets(std::span<const NodeCandidate> nodes) noexcept;

// The score points breaking the sets of `broken` costs: `points` times the sum, over the broken
// sizes, of one over the nodes holding a set of that size, rounded, and at most `points`.
int scarceSetPoints(std::uint8_t broken, const ScarceSets& sets, int points) noexcept;

}  // namespace gte
