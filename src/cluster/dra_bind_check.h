#pragma once
// At bind, kube-scheduler has already written the pod's claims' allocation (its PreBind runs
// before the extender's bind). Comparing what it allocated with what the extender's first-fit
// replica predicts for that node (the node as if the pod's own claims held nothing) measures the
// prediction the placement rests on (docs/dra.md, "Explain and metrics"). Pure.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/node_state.h"
#include "dra/dra_objects.h"
#include "model/pod_info.h"
#include "policy/policy.h"

namespace gte::cluster {

enum class DraBindCheck : std::uint8_t {
  kNotApplicable,  // no ResourceClaims
  kMatch,          // the allocated devices are the predicted ones
  kMismatch,       // they differ (or the replica predicted no allocation there)
  kUnknown,        // a claim not cached or not yet allocated in the cache, or uninterpretable
};

// The `result` label of gpu_topology_extender_dra_bind_predictions_total: match, mismatch, unknown
// (kNotApplicable is never counted: ""); every counted result's name, in the enum's order.
std::string_view draBindCheckName(DraBindCheck check) noexcept;
std::vector<std::string_view> draBindCheckNames();

// `groupHolds`: the charge uids of the slots the pod's group holds on the node (kept for it, so
// free to it: the group's holds are taken for other pods' claims, not for its members').
DraBindCheck checkDraBind(const PodInfo& pod, const NodeState& state,
                          const dra::DraObjects& objects, const Policy& policy,
                          const std::vector<std::string>& groupHolds = {});

}  // namespace gte::cluster
