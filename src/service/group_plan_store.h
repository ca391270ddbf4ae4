#pragma once
// What the service needs from a cluster cache to plan pod groups (docs/groups.md) beyond the
// snapshot (which publishes each group's plan and members): the one write a request makes,
// committing a plan, which holds its slots and publishes a snapshot. src/cluster's ClusterState
// implements it; a ClusterBackend hands it out (ClusterBackend::groupPlans), so every backend built
// on a ClusterState plans groups.
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
};

}  // namespace gte
