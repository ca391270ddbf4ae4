#pragma once
// A pod group's plan as the first member's filter makes it, for the cluster-cache tests: `members`
// 4-GPU members over every node of the state's snapshot, keyed `key` (group "ml/llm", size 4).
#include <string>
#include <vector>

#include "cluster/cluster_state.h"
#include "group/group_plan.h"
#include "snapshot/cluster_snapshot.h"

namespace gte::testing {

inline CommittedGroupPlan planFourGpuGroup(const cluster::ClusterState& state, int members,
                                           const std::string& key,
                                           const std::vector<std::string>& anchors = {}) {
  const auto snapshot = state.snapshot();
  std::vector<GroupPlanNode> nodes;
  snapshot->nodes.forEach([&](const std::string& name, const NodeStateConstSharedPtr& s) {
    nodes.push_back(GroupPlanNode{name, s.get(), snapshot->nodes.groupFacts(name)});
  });
  std::vector<GroupDomainIds> anchorIds;
  for (const std::string& node : anchors)
    anchorIds.push_back(snapshot->nodes.groupFacts(node)->domain);
  PodDemand four;
  four.gpus = 4;
  const std::vector<PodDemand> demands(static_cast<std::size_t>(members), four);
  GroupPlanInput in;
  in.group = "ml/llm";
  in.levels = snapshot->policy->groups.levels;
  in.nodes = nodes;
  in.members = demands;
  in.anchors = anchorIds;
  CommittedGroupPlan plan;
  plan.key = key;
  plan.group = "ml/llm";
  plan.size = 4;
  plan.levels = snapshot->policy->groups.levels;
  plan.demands = demands;
  plan.plan = planGroup(in, *snapshot->policy);
  return plan;
}

}  // namespace gte::testing
