#pragma once
// What a pod-group member's request decided about its group (docs/groups.md#metrics): the
// planner's status for the group, or what the service found before planning it (the group's size
// is not known) or after (a commit found its GPUs taken and planned again). The metric
// `gpu_topology_extender_group_decisions_total{outcome}` takes these names, declared at start
// from groupOutcomeNames(); nothing else spells them.
#include <cstdint>
#include <string_view>
#include <vector>

#include "group/group_plan.h"

namespace gte {

enum class GroupOutcome : std::uint8_t {
  kPlanned,      // a plan was made and committed (the group's first member)
  kNoRoom,       // a required level cannot hold the group now: members refused
  kNeverFits,    // ... not even with every GPU free
  kUnplaced,     // no level demands it and the candidates cannot hold the whole group: per pod
  kUnsupported,  // MIG members: per pod
  kSizeUnknown,  // the group's size is not known: per pod
  kStale,        // a commit found its GPUs taken meanwhile and planned again
};

// The planner's status as a decision.
GroupOutcome groupOutcomeOf(GroupPlanStatus status) noexcept;
std::string_view groupOutcomeName(GroupOutcome outcome) noexcept;
// Every name, in enum order.
std::vector<std::string_view> groupOutcomeNames();

}  // namespace gte
