#pragma once
// MIG placement on one GPU's 8 memory slices. A GPU instance occupies [start, start + slices);
// a profile fits only at a legal start none of whose slices is occupied (docs/labels-v1.md, "MIG
// instance tokens"). Counting free slices is not enough: 1g@0 + 1g@5 leaves six free slices and no
// 3g.
#include <cstdint>
#include <optional>
#include <vector>

#include "policy/mig_product.h"
#include "topology/gpu_topology.h"

namespace gte {

using SliceMask = std::uint8_t;  // bit s = memory slice s

constexpr SliceMask sliceMask(int start, int slices) noexcept {
  return static_cast<SliceMask>(((1u << static_cast<unsigned>(slices)) - 1u)
                                << static_cast<unsigned>(start));
}

constexpr bool placementFree(SliceMask occupied, int start, int slices) noexcept {
  return (occupied & sliceMask(start, slices)) == 0;
}

// Slices covered by the GPU's instances (free, used or reserved alike: an instance holds its
// slices whether or not a pod uses it). Tokens whose profile the product lacks cover nothing; the
// label reader has already rejected those.
SliceMask occupiedSlices(const std::vector<MigInstance>& instances, const MigProduct& product);

// How much the open placements of a GPU are worth: the sum, over every profile and every legal
// start still free, of the profile's slice count. Large profiles weigh more, and a placement
// that blocks fewer future placements keeps more value.
int placementValue(SliceMask occupied, const MigProduct& product);

struct SlicePlacement {
  int start = -1;
  int valueAfter = 0;  // placementValue once the instance is placed
};

// The free legal start for `profile` that keeps the most placement value; ties go to the highest
// start (the driver's own habit of filling slices from the top). nullopt when none is free.
std::optional<SlicePlacement> bestFreePlacement(SliceMask occupied, const MigProfile& profile,
                                                const MigProduct& product);

// Instances of a profile code on the GPU (for per-profile caps such as one `+me` per GPU).
int instanceCount(const std::vector<MigInstance>& instances, char profileCode);

}  // namespace gte
