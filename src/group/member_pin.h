#pragma once
// Which held slot of its group's plan a waiting member is pinned to (docs/groups.md#pins). In a
// kube-scheduler v1.37 gang cycle every member is filtered before any binds, and the scheduler
// never tells the extender where it assumed the earlier ones: had every member been kept on every
// node where its group holds a slot of its shape, the scheduler could send two members to a node
// holding one, and the second bind would find the node's other GPUs taken (held for another group,
// say): refused, retried at once, the gang half bound. So each waiting member is kept on the node
// of one slot only: the members of one shape, sorted by name, take the group's held slots of that
// shape in plan order. Members binding into their slots leave the others' pins where they were
// (both lists lose one entry, at the same rank, or two entries of one node swap), so a cycle's
// pins hold across binds, retries and restarts. Pure.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/pod_demand.h"
#include "group/committed_group_plan.h"

namespace gte {

// `waitingNames`: the names of the group's members waiting for a node whose demand has `demand`'s
// shape, in any order (duplicates and `name` itself may be among them; `name` counts once
// either way). Returns the index into plan.plan.slots of the member's held slot, or nullopt when
// more members of its shape wait than slots of that shape are held and it ranks past them: the
// plan has no slot for it then, and it is decided as any pod.
std::optional<std::size_t> pinnedSlot(const CommittedGroupPlan& plan, const PodDemand& demand,
                                      std::string_view name,
                                      std::span<const std::string> waitingNames);

}  // namespace gte
