#include "core/pod_route.h"

#include "core/claims_as_gpus.h"

namespace gte {

PodRoute routeOn(const PodDemand& demand, const NodeState& state) noexcept {
  if (demand.dra && demand.dra->passedThrough()) return PodRoute::kPassedThrough;
  if (!demand.draClaims()) return PodRoute::kDevicePlugin;
  if (claimsAreGpus(demand) && readsClaimsAsGpus(*demand.dra, state)) {
    return PodRoute::kClaimsAsGpus;
  }
  return PodRoute::kDraFirstFit;
}

}  // namespace gte
