#include "core/claims_as_gpus.h"

#include "core/node_state.h"
#include "dra_placement/dra_node_state.h"

namespace gte {

bool claimsAreGpus(const PodDemand& demand) noexcept {
  if (!demand.draClaims() || demand.dra->plainGpus <= 0 || !demand.mig.empty()) return false;
  // The pod's own nvidia.com/gpu is a last claim of the class backing it: of the same class, it
  // simply continues the first-fit down the same order.
  return demand.gpus == 0 || demand.dra->extendedClass == demand.dra->plainClass;
}

std::optional<PodDemand> claimsAsGpus(const PodDemand& demand) {
  if (!claimsAreGpus(demand)) return std::nullopt;
  PodDemand gpus = demand;
  gpus.dra = nullptr;
  gpus.gpus = demand.dra->plainGpus + demand.gpus;
  return gpus;
}

bool readsClaimsAsGpus(const DraDemand& demand, const NodeState& state) noexcept {
  if (state.allocator != GpuAllocator::kDra || !state.dra) return false;
  const DraNodeState& dra = *state.dra;
  return dra.plainClass == demand.plainClass && dra.catalog == demand.catalog &&
         !dra.plainUninterpretable;
}

}  // namespace gte
