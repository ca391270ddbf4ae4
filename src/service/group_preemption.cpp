#include "service/group_preemption.h"

#include <algorithm>
#include <map>
#include <memory>

#include "core/group_answers.h"
#include "core/node_charges.h"
#include "core/pod_group.h"
#include "group/group_plan.h"
#include "group/member_answers.h"
#include "service/cluster_backend.h"
#include "service/group_requests.h"
#include "snapshot/cluster_snapshot.h"

namespace gte {
namespace {

// A committed plan: candidates outside its required domains are dropped, the one holding the
// member's pinned slot (group_requests.h, pinnedStates) needs no GPU victim.
std::vector<GroupPreempt> insidePlan(const CommittedGroupPlan& plan,
                                     const ClusterSnapshot& snapshot, const PodInfo& pod,
                                     const PodDemand& demand,
                                     std::span<const PreemptCandidate> candidates) {
  std::vector<NodeCandidate> nodes;
  std::vector<const NodeGroupFacts*> facts;
  for (const PreemptCandidate& c : candidates) {
    nodes.push_back(NodeCandidate{c.node, c.state, {}, nullptr});
    facts.push_back(snapshot.nodes.groupFacts(c.node));
  }
  const std::vector<const NodeState*> open = pinnedStates(plan, snapshot, pod, demand);
  const GroupAnswers answers = memberAnswers(plan, nodes, facts, open, snapshot.groupDomains.get());
  std::vector<GroupPreempt> out;
  for (const GroupAnswers::Kind kind : answers.nodes) {
    out.push_back(kind == GroupAnswers::Kind::kRefused   ? GroupPreempt::kDrop
                  : kind == GroupAnswers::Kind::kPlanned ? GroupPreempt::kHeld
                                                         : GroupPreempt::kJudge);
  }
  return out;
}

// What a plan evicts: the GPU-holding victims of the candidates it puts members on, each node
// counted once.
std::size_t evictions(const GroupPlan& plan, std::span<const PreemptCandidate> candidates,
                      const std::map<std::string_view, std::size_t>& candidateAt) {
  std::vector<std::size_t> used;
  for (const PlannedSlot& slot : plan.slots) {
    const auto it = candidateAt.find(slot.node);
    if (it == candidateAt.end()) continue;
    if (std::find(used.begin(), used.end(), it->second) == used.end()) used.push_back(it->second);
  }
  std::size_t total = 0;
  for (const std::size_t i : used)
    total += candidates[i].victims.size();
  return total;
}

// The least-cost domain: the plan over the whole emptied cluster picks a domain by the planner's
// own order (best fit on what would be free), which knows nothing of what freeing it costs. Each
// other domain of the plan's level that holds a candidate is planned alone; the one whose plan
// evicts the fewest GPU-holding victims wins, the planner's choice on a tie.
GroupPlan leastCostPlan(GroupPlan plan, GroupPlanInput in, std::span<const GroupPlanNode> nodes,
                        std::span<const PreemptCandidate> candidates,
                        const std::map<std::string_view, std::size_t>& candidateAt,
                        const Policy& policy) {
  if (plan.level < 0) return plan;
  const auto level = static_cast<std::size_t>(plan.level);
  std::vector<std::uint32_t> domains;
  for (const GroupPlanNode& node : nodes) {
    const std::uint32_t d = node.facts->domain[level];
    if (d == kNoDomain || d == plan.domain[level] || !candidateAt.contains(node.name)) continue;
    if (std::find(domains.begin(), domains.end(), d) == domains.end()) domains.push_back(d);
  }
  std::size_t cost = evictions(plan, candidates, candidateAt);
  std::vector<GroupPlanNode> inside;
  for (const std::uint32_t d : domains) {
    if (cost == 0) break;
    inside.clear();
    for (const GroupPlanNode& node : nodes) {
      if (node.facts->domain[level] == d) inside.push_back(node);
    }
    in.nodes = inside;
    GroupPlan alone = planGroup(in, policy);
    if (alone.status != GroupPlanStatus::kPlanned) continue;
    const std::size_t aloneCost = evictions(alone, candidates, candidateAt);
    if (aloneCost < cost) {
      cost = aloneCost;
      plan = std::move(alone);
    }
  }
  return plan;
}

}  // namespace

std::optional<std::vector<GroupPreempt>> groupPreemption(
    const PodInfo& pod, const PodDemand& demand, const PodGroupRef* podGroup,
    const ClusterSnapshot& snapshot, const ClusterBackend* cluster,
    std::span<const PreemptCandidate> candidates) {
  using Keep = std::optional<std::vector<GroupPreempt>>;
  const Policy& policy = *snapshot.policy;
  GroupPlanStore* store = cluster != nullptr ? cluster->groupPlans() : nullptr;
  if (podGroup == nullptr || demand.empty() || store == nullptr) return Keep{};
  const PodGroupRef& ref = *podGroup;
  if (const CommittedGroupPlan* plan = snapshot.groupPlan(ref.key)) {
    return Keep{insidePlan(*plan, snapshot, pod, demand, candidates)};
  }
  if (!ref.size) return Keep{};

  // The cluster as it would be with every candidate's victims gone.
  std::map<std::string_view, std::size_t> candidateAt;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    candidateAt.emplace(candidates[i].node, i);
  std::vector<NodeStateConstSharedPtr> emptied;
  std::vector<NodeGroupFacts> facts;
  std::vector<GroupPlanNode> nodes;
  std::vector<std::string> names;
  snapshot.nodes.forEach(
      [&](const std::string& name, const NodeStateConstSharedPtr&) { names.push_back(name); });
  facts.reserve(names.size());
  emptied.reserve(names.size());
  for (const std::string& name : names) {
    const NodeState* state = snapshot.find(name);
    const NodeGroupFacts* published = snapshot.nodes.groupFacts(name);
    if (state == nullptr || published == nullptr) continue;
    if (const auto it = candidateAt.find(name); it != candidateAt.end()) {
      emptied.push_back(nodeStateWithout(*state, candidates[it->second].victims, policy));
      state = emptied.back().get();
    }
    facts.push_back(nodeGroupFacts(*state, published->domain, policy));
    nodes.push_back(GroupPlanNode{name, state, nullptr});
  }
  for (std::size_t i = 0; i < nodes.size(); ++i)
    nodes[i].facts = &facts[i];

  const GroupMemberView& members = snapshot.membersOrNone(ref.key);
  std::vector<GroupDomainIds> anchors;
  for (const std::string& node : members.placedNodes) {
    if (const NodeGroupFacts* f = snapshot.nodes.groupFacts(node)) anchors.push_back(f->domain);
  }
  const std::int64_t toPlace = *ref.size - static_cast<std::int64_t>(members.placedNodes.size());
  if (toPlace <= 0) return Keep{};
  const std::vector<PodDemand> demands(static_cast<std::size_t>(toPlace), demand);
  const std::string group = ref.ns + "/" + ref.name;
  GroupPlanInput in;
  in.group = group;
  in.levels = ref.levels;
  in.sameModel = ref.sameModel;
  in.domainNames = snapshot.groupDomains.get();
  in.nodes = nodes;
  in.members = demands;
  in.anchors = anchors;
  GroupPlan plan = planGroup(in, policy);
  if (plan.status == GroupPlanStatus::kUnplaced || plan.status == GroupPlanStatus::kUnsupported) {
    return Keep{};
  }
  if (plan.status == GroupPlanStatus::kPlanned) {
    plan = leastCostPlan(std::move(plan), in, nodes, candidates, candidateAt, policy);
  }
  // Keep the candidates the plan puts members on; with no plan even then, none helps.
  std::vector<GroupPreempt> keep(candidates.size(), GroupPreempt::kDrop);
  for (const PlannedSlot& slot : plan.slots) {
    if (const auto it = candidateAt.find(slot.node); it != candidateAt.end()) {
      keep[it->second] = GroupPreempt::kJudge;
    }
  }
  return Keep{std::move(keep)};
}

}  // namespace gte
