#pragma once
// What a pod asks of Dynamic Resource Allocation (docs/dra.md, "Demand from claims"): the claims
// the scheduler will allocate for it on the chosen node (its ResourceClaims without an allocation,
// in spec.resourceClaims order: a named claim, or the claim made for a template entry
// (status.resourceClaimStatuses), or, before that claim exists, the template's spec), each
// compiled for the first-fit replica; and its DRA-backed extended resource: `nvidia.com/gpu: N`
// goes through DRA on nodes without device-plugin allocatable for it, as a last claim of N devices
// of the class that backs it. A pod the extender cannot interpret (a claim not in the cache, a
// request or selector outside what it replicates) is passed through: every node fits with no
// score, and the reason is kept for explain and the pass-through metric.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dra/claim_program.h"
#include "dra/class_catalog.h"
#include "dra/dra_objects.h"
#include "model/pod_info.h"

namespace gte {

// Why a pod is passed through, by kind (the pass-through metric's `reason` label).
enum class DraPassThrough : std::uint8_t {
  kNone,
  kOtherExtendedResource,  // an extended resource a class backs, other than nvidia.com/gpu
  kClaimNotCached,         // a claim the cache does not have (yet)
  kTemplateEntry,          // a template entry without its claim: no claim or template known
  kUninterpretable,        // a request, constraint, selector or class outside the replica
  kCount
};
// The metric label: other_extended_resource, claim_not_cached, template_entry, uninterpretable.
std::string_view draPassThroughName(DraPassThrough reason) noexcept;
// Every reason's name (kNone and kCount excepted), in the enum's order.
std::vector<std::string_view> draPassThroughNames();

struct DraDemand {
  std::vector<dra::ClaimProgram> claims;  // to allocate, in the scheduler's order
  int allocatedClaims = 0;                // the pod's claims that already hold devices
  // nvidia.com/gpu backed by a DeviceClass: the claim the scheduler makes on a node that hands
  // the resource out through DRA (NodeState::allocator == kDra); -1 when no class backs it.
  int extendedClass = -1;
  dra::ClaimProgram extendedClaim;
  std::string passThrough;  // why the extender makes no claim about the pod; empty: it does
  DraPassThrough passThroughKind = DraPassThrough::kNone;
  // Claims that amount to "N devices of one class" (exact counts, no selectors, tolerations,
  // capacity requests or constraints): on a node whose plain order is that class's, the first-fit
  // set is the first N free GPUs of that order, which the node state has precomputed (docs/dra.md,
  // "Cost").
  std::int64_t plainGpus = 0;  // 0: the claims are not of that form
  int plainClass = -1;
  // Claims that ask, in every request and each of its alternatives (firstAvailable tiers), an
  // exact count of devices of one class, whatever their selectors and constraints (the tiers of
  // `claim-template`, docs/dra.md): that many devices per pod, the same in every tier. The group
  // planner plans such members by running the first-fit on each node one member after another
  // (docs/groups.md, "DRA nodes"). 0: the claims are not of that form.
  std::int64_t tieredDevices = 0;
  // The classes the programs' class indices refer to: a node's precomputed matches are usable
  // only when computed from the same catalog (otherwise that node is passed through).
  dra::ClassCatalogConstSharedPtr catalog;

  bool hasClaims() const noexcept { return !claims.empty(); }
  bool passedThrough() const noexcept { return !passThrough.empty(); }
};

using DraDemandConstSharedPtr = std::shared_ptr<const DraDemand>;

// Sets the forms the claims amount to (plainGpus and plainClass, tieredDevices) from `claims`:
// resolveDraDemand does; a demand built by hand (the simulator's) calls it.
void classifyClaims(DraDemand& demand);

// Null when the pod has no DRA part: no resourceClaims, and no nvidia.com/gpu a class backs, or
// `objects` is null (the cluster state does not watch DRA objects: the pod is read as before).
// `gpus` is the pod's effective nvidia.com/gpu request.
DraDemandConstSharedPtr resolveDraDemand(const PodInfo& pod, std::int64_t gpus,
                                         const dra::DraObjects* objects);

}  // namespace gte
