#include "topology/mig_placement.h"

namespace gte {

SliceMask occupiedSlices(const std::vector<MigInstance>& instances, const MigProduct& product) {
  SliceMask occupied = 0;
  for (const MigInstance& instance : instances) {
    if (const MigProfile* profile = product.findByCode(instance.profileCode)) {
      occupied = static_cast<SliceMask>(occupied | sliceMask(instance.start, profile->slices));
    }
  }
  return occupied;
}

int placementValue(SliceMask occupied, const MigProduct& product) {
  int value = 0;
  for (const MigProfile& profile : product.profiles) {
    for (int start : profile.starts) {
      if (placementFree(occupied, start, profile.slices)) {
        value += profile.slices;
      }
    }
  }
  return value;
}

std::optional<SlicePlacement> bestFreePlacement(SliceMask occupied, const MigProfile& profile,
                                                const MigProduct& product) {
  std::optional<SlicePlacement> best;
  for (auto it = profile.starts.rbegin(); it != profile.starts.rend(); ++it) {
    if (!placementFree(occupied, *it, profile.slices)) {
      continue;
    }
    const auto after = static_cast<SliceMask>(occupied | sliceMask(*it, profile.slices));
    const int value = placementValue(after, product);
    if (!best || value > best->valueAfter) {
      best = SlicePlacement{*it, value};
    }
  }
  return best;
}

int instanceCount(const std::vector<MigInstance>& instances, char profileCode) {
  int count = 0;
  for (const MigInstance& instance : instances) {
    count += instance.profileCode == profileCode ? 1 : 0;
  }
  return count;
}

}  // namespace gte
