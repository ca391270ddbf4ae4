#include "sim/live_group_plan.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <map>
#include <string>

#include "core/allocation.h"
#include "core/node_charges.h"
#include "core/predict_allocation.h"
#include "topology/pair_table.h"

namespace gte::sim {
namespace {

struct PlanningNode {
  NodeStateConstSharedPtr state;
  NodeUsage usage;
  FreeSetCounts sets{};
};

void addSets(FreeSetCounts& total, const FreeSetCounts& delta, int sign) {
  for (std::size_t k = 0; k < total.size(); ++k)
    total[k] += sign * delta[k];
}

}  // namespace

LiveGroupPlan planGroupOnLiveStates(const LiveGroupPlanInput& input, const Policy& policy) {
  LiveGroupPlan out;
  std::vector<PlanningNode> nodes(input.nodes.size());
  std::vector<NodeGroupFacts> facts(input.nodes.size());
  std::vector<GroupPlanNode> candidates;
  std::map<std::string_view, std::size_t> indexOf;
  candidates.reserve(input.nodes.size());
  const GroupDomainIds none{kNoDomain, kNoDomain, kNoDomain, kNoDomain};
  for (std::size_t i = 0; i < input.nodes.size(); ++i) {
    const LiveNode& live = input.nodes[i];
    PlanningNode& node = nodes[i];
    node.usage = chargedUsage(*live.state);
    node.state = input.rebuild ? rebuildNodeState(*live.state, node.usage, policy) : live.state;
    node.sets = freeNvlinkSets(*node.state);
    addSets(out.clusterBefore, node.sets, 1);
    facts[i] =
        nodeGroupFacts(*node.state, i < input.domains.size() ? input.domains[i] : none, policy);
    candidates.push_back(GroupPlanNode{live.name, node.state.get(), &facts[i]});
    indexOf.emplace(live.name, i);
  }
  GroupPlanInput planning;
  planning.group = input.group;
  planning.levels = input.levels;
  planning.sameModel = input.sameModel;
  planning.domainNames = input.domainNames;
  planning.nodes = candidates;
  planning.members = input.members;
  planning.explain = true;
  out.plan = planGroup(planning, policy);

  out.steps.resize(input.members.size());
  FreeSetCounts cluster = out.clusterBefore;
  // Members take their GPUs in the plan's order (by node, then in the order the planner gave
  // their sets there): each set is the device plugin's pick on the node the earlier ones left.
  std::size_t next = 0;
  for (const PlannedSlot& slot : out.plan.slots) {
    const auto found = indexOf.find(slot.node);
    if (found == indexOf.end() || slot.member >= input.members.size() || next >= out.steps.size()) {
      continue;
    }
    const std::size_t at = found->second;
    PlanningNode& node = nodes[at];
    const PodDemand& demand = input.members[slot.member];
    ReplayStep& step = out.steps[next++];
    PodPlacement& placement = step.placement;
    placement.node = static_cast<int>(at);
    for (const int gpu : slot.allocation.gpus)
      placement.gpus |= bitOf(gpu);
    if (const GpuPick* pick = demand.gpus >= 1 ? wholeGpuPick(demand, *node.state) : nullptr;
        pick != nullptr && pick->gpus == placement.gpus) {
      if (std::popcount(placement.gpus) > 1) placement.weakest = pick->weakest;
      placement.strandedGpus = pick->stranded;
    }
    step.nodeBefore = node.sets;
    addToUsage(node.usage, slot.allocation);
    node.state = rebuildNodeState(*input.nodes[at].state, node.usage, policy);
    node.sets = freeNvlinkSets(*node.state);
    step.nodeAfter = node.sets;
    addSets(cluster, step.nodeBefore, -1);
    addSets(cluster, step.nodeAfter, 1);
    step.clusterAfter = cluster;
  }
  // Members the plan does not place see the cluster as the placed ones leave it.
  for (std::size_t i = next; i < out.steps.size(); ++i)
    out.steps[i].clusterAfter = cluster;
  return out;
}

}  // namespace gte::sim
