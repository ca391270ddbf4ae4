#pragma once
// A group what-if on a live cluster: "if a group of M pods arrived now, where would each go?",
// answered by the extender's group planner (group/group_plan.h, planGroup: the domain, each
// member's node, each member's GPU set) over a copy of the cluster's node states, and what each
// member strands: the free all-NVLink sets of its node before and after it, and of the whole
// cluster. The states given are shared and immutable; the members' GPUs are taken on copies, one
// member after another in the plan's order, so nothing the caller holds changes. Every node is a
// candidate (kube-scheduler's own filters are not modelled, as in sim/live_replay.h).
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "core/pod_demand.h"
#include "group/group_domains.h"
#include "group/group_plan.h"
#include "policy/group_levels.h"
#include "policy/policy.h"
#include "sim/live_replay.h"

namespace gte::sim {

struct LiveGroupPlanInput {
  std::span<const LiveNode> nodes;
  // nodes[i]'s domain per level of `levels` (the snapshot's group facts); kNoDomain throughout
  // for a node without them.
  std::span<const GroupDomainIds> domains;
  const GroupDomainNames* domainNames = nullptr;  // for the plan's texts; may be null
  std::string_view group;                         // "namespace/name", for the plan's texts
  std::span<const GroupLevel> levels;
  std::optional<GroupLevelMode> sameModel;  // nullopt: the planner's policy's
  std::span<const PodDemand> members;       // one slot each, all asking for GPUs
  // The states were built under another policy than the planner's (the what-if of a policy
  // change): each is rebuilt under it first, from the same labels and usage.
  bool rebuild = false;
};

struct LiveGroupPlan {
  GroupPlan plan;  // the planner's answer, with a verdict for every domain it looked at
  FreeSetCounts clusterBefore{};
  // One per member, in the plan's order (plan.slots: by node, members of a node in the order
  // their sets were picked), then the members it does not place: placement.node indexes
  // input.nodes, -1 when not placed. placement.score and wireScore stay -1: the planner ranks
  // domains and nodes by best fit, not by score.
  std::vector<ReplayStep> steps;
};

LiveGroupPlan planGroupOnLiveStates(const LiveGroupPlanInput& input, const Policy& policy);

}  // namespace gte::sim
