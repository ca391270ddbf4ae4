#include "cluster/dra_bind_check.h"

#include <algorithm>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "core/dra_decision.h"
#include "core/node_charges.h"
#include "dra_placement/dra_demand.h"
#include "dra_placement/dra_node_state.h"

namespace gte::cluster {
namespace {

// (claim position, pool, device): one allocated device of the pod's claims, in a comparable form.
using Held = std::tuple<std::size_t, std::string, std::string>;

// The pod's claims in spec order; empty when one is not cached or not allocated yet.
std::vector<dra::ResourceClaimConstSharedPtr> podClaims(const PodInfo& pod,
                                                        const dra::DraObjects& objects) {
  std::vector<dra::ResourceClaimConstSharedPtr> out;
  for (const PodResourceClaim& entry : pod.resourceClaims) {
    std::string name = entry.resourceClaimName;
    if (name.empty()) {
      for (const PodResourceClaimStatus& status : pod.resourceClaimStatuses) {
        if (status.name == entry.name) name = status.resourceClaimName;
      }
      if (name.empty()) continue;  // the template needed no claim (or none is made yet)
    }
    dra::ResourceClaimConstSharedPtr claim = objects.claim(pod.ns, name);
    if (!claim || !claim->allocated) return {};
    out.push_back(std::move(claim));
  }
  return out;
}

}  // namespace

std::string_view draBindCheckName(DraBindCheck check) noexcept {
  switch (check) {
    case DraBindCheck::kMatch:
      return "match";
    case DraBindCheck::kMismatch:
      return "mismatch";
    case DraBindCheck::kUnknown:
      return "unknown";
    case DraBindCheck::kNotApplicable:
      break;
  }
  return "";
}

std::vector<std::string_view> draBindCheckNames() {
  return {draBindCheckName(DraBindCheck::kMatch), draBindCheckName(DraBindCheck::kMismatch),
          draBindCheckName(DraBindCheck::kUnknown)};
}

DraBindCheck checkDraBind(const PodInfo& pod, const NodeState& state,
                          const dra::DraObjects& objects, const Policy& policy,
                          const std::vector<std::string>& groupHolds) {
  if (pod.resourceClaims.empty()) return DraBindCheck::kNotApplicable;
  const std::vector<dra::ResourceClaimConstSharedPtr> claims = podClaims(pod, objects);
  if (claims.empty()) return DraBindCheck::kUnknown;
  // The same claims unallocated, resolved as filter resolved them.
  dra::DraObjectMaps unallocated(objects.classes());
  std::vector<Held> actual;
  for (std::size_t i = 0; i < claims.size(); ++i) {
    auto copy = std::make_shared<dra::ResourceClaim>(*claims[i]);
    for (const dra::AllocatedDevice& device : copy->devices) {
      if (!device.adminAccess) actual.emplace_back(i, device.pool, device.device);
    }
    copy->allocated = false;
    copy->devices.clear();
    copy->reservedFor.clear();
    unallocated.add(std::move(copy));
  }
  const DraDemandConstSharedPtr demand = resolveDraDemand(pod, 0, &unallocated);
  if (!demand || demand->passedThrough() || demand->claims.size() != claims.size()) {
    return DraBindCheck::kUnknown;
  }
  // The node as the pod found it: the devices only its own claims hold, and its group's holds
  // there, are free again.
  std::vector<std::string> own = groupHolds;
  own.push_back(pod.uid);
  const NodeStateConstSharedPtr before = nodeStateWithout(state, own, policy);
  if (!before || !before->dra) return DraBindCheck::kMismatch;
  DraDecider decider(*demand);
  const DraPlacement placed = decider.place(*before);
  if (placed.outcome == DraOutcome::kPassThrough) return DraBindCheck::kUnknown;
  if (placed.outcome != DraOutcome::kPlaced) return DraBindCheck::kMismatch;
  std::vector<Held> predicted;
  for (const dra::PickedDevice& picked : placed.result.devices) {
    const dra::NodeDevice& device = before->dra->devices.devices[picked.position];
    predicted.emplace_back(picked.claim, before->dra->devices.pools[device.pool].name,
                           std::string(device.slice->deviceName(device.index)));
  }
  std::sort(actual.begin(), actual.end());
  std::sort(predicted.begin(), predicted.end());
  return actual == predicted ? DraBindCheck::kMatch : DraBindCheck::kMismatch;
}

}  // namespace gte::cluster
