#pragma once
// Which held slot of its group's plan a waiting member is pinned to (docs/groups.md#pins). In a
// kube-scheduler v1.37 gang cycle every member is filtered before any binds, and the scheduler
// never tells the extender where it assumed the earlier ones: had every member been kept on every
// node where its group holds a slot of its shape, the scheduler could send two members to a node
// holding one, and the second bind would find the node's other GPUs taken (held for another group,
// say): refused, retried at once, the gang half bound. So each waiting member is kept on the node
// of one slot only.
//
// A member's filter records its slot in the plan (CommittedGroupPlan::pinnedTo): from then on the
// member keeps that slot, and no other member is given it, whatever the cache has seen of the
// others by then. A member not pinned yet takes, among the members of its shape that are not
// pinned (sorted by name), the held slots of its shape that are not pinned, in plan order. Ranking
// alone would not do: a member filtered before the watch delivered the others ranks among fewer
// names, and two members could be given one slot (a member that sorts before one already pinned
// takes its rank).
// Pure.
#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

#include "core/pod_demand.h"
#include "group/committed_group_plan.h"

namespace gte {

// A waiting member, as pins rank it.
struct PinCandidate {
  std::string_view uid;  // may be empty (never pinned then)
  std::string_view name;
};

// `waiting`: the group's members waiting for a node whose demand has `demand`'s shape, in any
// order (duplicates and `self` may be among them; `self` counts once either way). Returns the index
// into plan.plan.slots of the member's held slot, or nullopt when the plan holds none of its shape
// for it (more members of its shape wait than slots of that shape are held, and it ranks past
// them): it is decided as any pod then.
std::optional<std::size_t> pinnedSlot(const CommittedGroupPlan& plan, const PodDemand& demand,
                                      PinCandidate self, std::span<const PinCandidate> waiting);

}  // namespace gte
