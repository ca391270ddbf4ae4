#include "service/bound_pod.h"

#include "core/node_charges.h"
#include "dra/dra_objects.h"

namespace gte {
namespace {

const PodCharge* chargeOn(const NodeState* state, const std::string& uid) {
  if (state == nullptr || !state->charges || uid.empty()) return nullptr;
  return state->charges->find(uid);
}

// The node whose charges hold the pod's reservation (the API server has not bound it yet).
std::optional<std::string> reservedOn(const PodInfo& pod, const ClusterSnapshot& snapshot) {
  std::optional<std::string> found;
  if (pod.uid.empty()) return found;
  snapshot.nodes.forEach([&](const std::string& name, const NodeStateConstSharedPtr& state) {
    if (!found && chargeOn(state.get(), pod.uid) != nullptr) found = name;
  });
  return found;
}

std::vector<BoundDevice> claimDevices(const PodInfo& pod, const dra::DraObjects* objects) {
  std::vector<BoundDevice> out;
  if (objects == nullptr) return out;
  for (const PodResourceClaim& entry : pod.resourceClaims) {
    std::string name = entry.resourceClaimName;
    for (const PodResourceClaimStatus& status : pod.resourceClaimStatuses) {
      if (name.empty() && status.name == entry.name) name = status.resourceClaimName;
    }
    if (name.empty()) continue;
    const dra::ResourceClaimConstSharedPtr claim = objects->claim(pod.ns, name);
    if (!claim || !claim->allocated) continue;
    for (const dra::AllocatedDevice& device : claim->devices)
      out.push_back({name, device.request, device.pool, device.device});
  }
  return out;
}

}  // namespace

std::optional<BoundPod> findBoundPod(const PodInfo& pod, const ClusterSnapshot& snapshot) {
  BoundPod out;
  if (!pod.nodeName.empty()) {
    out.node = pod.nodeName;
  } else if (auto node = reservedOn(pod, snapshot)) {
    out.node = std::move(*node);
    out.reserved = true;
  } else {
    return std::nullopt;
  }
  if (const PodCharge* charge = chargeOn(snapshot.find(out.node), pod.uid)) {
    out.charged = true;
    out.allocation = charge->allocation;
  }
  out.devices = claimDevices(pod, snapshot.dra.get());
  return out;
}

}  // namespace gte
