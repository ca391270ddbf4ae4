#include "sim/mig_slices.h"

#include <bit>

namespace gte::sim {
namespace {

int freeMemorySlices(SliceMask occupied) noexcept {
  return kMigMemorySlices - std::popcount(static_cast<unsigned>(occupied));
}

int usedComputeSlices(const std::vector<MigInstance>& instances, const MigProduct& product) {
  int used = 0;
  for (const MigInstance& instance : instances) {
    if (const MigProfile* profile = product.findByCode(instance.profileCode)) {
      used += computeSlices(*profile);
    }
  }
  return used;
}

}  // namespace

int computeSlices(const MigProfile& profile) noexcept {
  int slices = 0;
  std::size_t i = 0;
  while (i < profile.name.size() && profile.name[i] >= '0' && profile.name[i] <= '9') {
    slices = slices * 10 + (profile.name[i] - '0');
    ++i;
  }
  return i > 0 && i < profile.name.size() && profile.name[i] == 'g' ? slices : 1;
}

bool sliceCountsFit(const NodeState& state, const MigProfile& profile) noexcept {
  if (!state.migProduct) {
    return false;
  }
  for (std::size_t gpu = 0; gpu < state.migUsable.size(); ++gpu) {
    if (state.migUsable[gpu] && freeMemorySlices(state.migOccupied[gpu]) >= profile.slices &&
        kMigComputeSlices - usedComputeSlices(state.migInstances[gpu], *state.migProduct) >=
            computeSlices(profile)) {
      return true;
    }
  }
  return false;
}

bool freeInstanceExists(const NodeState& state, const MigProfile& profile) noexcept {
  for (const std::vector<MigInstance>& free : state.migFreeInstances) {
    for (const MigInstance& instance : free) {
      if (instance.profileCode == profile.code) {
        return true;
      }
    }
  }
  return false;
}

int freeMigSlices(const NodeState& state) noexcept {
  int free = 0;
  for (std::size_t gpu = 0; gpu < state.migUsable.size(); ++gpu) {
    if (!state.migUsable[gpu]) {
      continue;
    }
    free += freeMemorySlices(state.migOccupied[gpu]);
    for (const MigInstance& instance : state.migFreeInstances[gpu]) {
      const MigProfile* profile = state.migProduct->findByCode(instance.profileCode);
      free += profile == nullptr ? 0 : profile->slices;
    }
  }
  return free;
}

}  // namespace gte::sim
