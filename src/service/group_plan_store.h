#pragma once
// What the service needs from a cluster cache to plan pod groups (docs/groups.md) beyond the
// snapshot (which publishes each group's plan and members): the two writes a filter makes,
// committing a plan (which holds its slots) and pinning a member to a held slot, each publishing
// a snapshot. src/cluster's ClusterState implements it; a ClusterBackend hands it out
// (ClusterBackend::groupPlans), so every backend built on a ClusterState plans groups.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "group/committed_group_plan.h"
#include "model/pod_info.h"

namespace gte {

class GroupPlanStore {
 public:
  virtual ~GroupPlanStore() = default;
  // Commits `plan` unless its group has one, holding its slots, and publishes a snapshot with it.
  // Returns the group's committed plan: this one, or the one another request committed first.
  // Errors: kUnavailable when a slot's GPUs are no longer free in the newest snapshot (the caller
  // plans again on it).
  virtual Result<CommittedGroupPlanConstSharedPtr> commitGroupPlan(CommittedGroupPlan plan) = 0;
  // Pins held slot `slot` of group `key`'s plan, the one committed as `sequence`, to the waiting
  // member `uid` (docs/groups.md#pins), unless it is pinned already or no longer held; the
  // member's earlier pin ends. Returns the group's plan as published after it (null when the
  // group has no plan any more): the caller checks whether the slot is the member's.
  virtual CommittedGroupPlanConstSharedPtr pinGroupMember(std::string_view key,
                                                          std::uint64_t sequence, std::size_t slot,
                                                          const std::string& uid) = 0;
};

}  // namespace gte
