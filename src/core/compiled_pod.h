#pragma once
// A pod prepared once per request, as kube-scheduler's PreFilter prepares it before asking every
// node: its demand (GPUs, MIG instances, annotations, its claims resolved against the request's
// snapshot) and its group identity, each parsed once. Every door that decides about the pod
// (filter, prioritize, explain, what-if, preempt, bind's re-check) compiles it with compilePod
// and asks its questions of the result, so an annotation one door refuses no other door accepts.
// Pure: no I/O, clock, locks or globals.
#include <optional>

#include "base/result.h"
#include "core/pod_demand.h"
#include "group/pod_group.h"
#include "model/pod_info.h"
#include "policy/policy.h"

namespace gte::dra {
class DraObjects;
}

namespace gte {

struct CompiledPod {
  Result<PodDemand> demand = PodDemand{};
  // The pod's group (nullopt: it belongs to none); an error is an invalid or contradictory group
  // annotation, group-size or group-levels on a pod of no group included.
  Result<std::optional<PodGroupRef>> group = std::optional<PodGroupRef>{};

  // Why the pod rejects itself on every node: its demand's error, else its group annotation's;
  // null when it has none.
  const Error* ownError() const noexcept;
  // The pod names a group validly.
  bool grouped() const noexcept { return group && group->has_value(); }
  const PodGroupRef* groupRef() const noexcept { return grouped() ? &**group : nullptr; }
  // What the per-node decision takes: the demand, or the pod's own error.
  Result<PodDemand> decidable() const;
  // Asks for nothing the extender places and rejects itself nowhere: every node fits it with no
  // score terms (kube-scheduler asks about such pods when the extender manages every pod).
  bool asksNothing() const noexcept;
};

// `dra`: the snapshot's DRA objects the claims resolve against (null without --dra); `sizes`: the
// pod-group owners' sizes (null: none known).
CompiledPod compilePod(const PodInfo& pod, const Policy& policy, const dra::DraObjects* dra,
                       const GroupSizeLookup* sizes);

}  // namespace gte
