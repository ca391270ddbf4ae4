#include "core/compiled_pod.h"

namespace gte {

const Error* CompiledPod::ownError() const noexcept {
  if (!demand) return &demand.error();
  if (!group) return &group.error();
  return nullptr;
}

Result<PodDemand> CompiledPod::decidable() const {
  if (const Error* error = ownError()) return *error;
  return *demand;
}

bool CompiledPod::asksNothing() const noexcept {
  return ownError() == nullptr && !grouped() && demand->empty() && !demand->dra;
}

CompiledPod compilePod(const PodInfo& pod, const Policy& policy, const dra::DraObjects* dra,
                       const GroupSizeLookup* sizes) {
  CompiledPod out;
  out.demand = parsePodDemand(pod, policy, dra);
  out.group = parsePodGroup(pod, policy, sizes);
  return out;
}

}  // namespace gte
