#include "service/group_preemption.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>

#include "core/group_answers.h"
#include "core/node_charges.h"
#include "group/group_plan.h"
#include "group/member_answers.h"
#include "group/pod_group.h"
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
// counted once, the highest priority among them and the work their eviction destroys. Fewer
// victims cost less; as many, a lower top priority; alike in both, less work lost.
struct EvictionCost {
  std::size_t victims = 0;
  std::int64_t topPriority = std::numeric_limits<std::int64_t>::min();
  double work = 0;
  friend auto operator<=>(const EvictionCost&, const EvictionCost&) = default;
};

EvictionCost costOf(const PreemptCandidate& candidate) {
  return EvictionCost{candidate.victims.size(), candidate.topPriority, candidate.work};
}

EvictionCost evictions(const GroupPlan& plan, std::span<const PreemptCandidate> candidates,
                       const std::map<std::string_view, std::size_t>& candidateAt) {
  std::vector<std::size_t> used;
  for (const PlannedSlot& slot : plan.slots) {
    const auto it = candidateAt.find(slot.node);
    if (it == candidateAt.end()) continue;
    if (std::find(used.begin(), used.end(), it->second) == used.end()) used.push_back(it->second);
  }
  EvictionCost total;
  for (const std::size_t i : used) {
    total.victims += candidates[i].victims.size();
    total.topPriority = std::max(total.topPriority, candidates[i].topPriority);
    total.work += candidates[i].work;
  }
  return total;
}

// A node as the plan may see it: as it is, or (a candidate) with its victims gone.
struct PlanChoice {
  GroupPlanNode asIs;
  GroupPlanNode emptied;
  std::size_t candidate = 0;  // index into the candidates; meaningful when isCandidate
  bool isCandidate = false;
};

// The group planned on `subset` with as few candidates emptied as it takes: candidates are emptied
// cheapest first (EvictionCost, then name), the others kept as they are, and the
// least number that lets the group land is found by bisection (emptying more never removes room).
// nullopt when even every candidate emptied does not hold it.
std::optional<GroupPlan> cheapestPlan(GroupPlanInput in, std::span<const PlanChoice> choices,
                                      std::span<const std::size_t> subset,
                                      std::span<const PreemptCandidate> candidates,
                                      const Policy& policy) {
  // Positions in `subset` of its candidates, cheapest first; rank[p]: the place of subset[p].
  std::vector<std::size_t> order;
  for (std::size_t p = 0; p < subset.size(); ++p) {
    if (choices[subset[p]].isCandidate) order.push_back(p);
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const PlanChoice& x = choices[subset[a]];
    const PlanChoice& y = choices[subset[b]];
    const EvictionCost cx = costOf(candidates[x.candidate]);
    const EvictionCost cy = costOf(candidates[y.candidate]);
    return cx != cy ? cx < cy : x.asIs.name < y.asIs.name;
  });
  std::vector<std::size_t> rank(subset.size(), order.size());
  for (std::size_t r = 0; r < order.size(); ++r)
    rank[order[r]] = r;
  std::vector<GroupPlanNode> nodes;
  const auto planWith = [&](std::size_t emptiedCount) {
    nodes.clear();
    for (std::size_t p = 0; p < subset.size(); ++p) {
      const PlanChoice& choice = choices[subset[p]];
      nodes.push_back(rank[p] < emptiedCount ? choice.emptied : choice.asIs);
    }
    in.nodes = nodes;
    return planGroup(in, policy);
  };
  GroupPlan best = planWith(order.size());
  if (best.status != GroupPlanStatus::kPlanned) return std::nullopt;
  std::size_t lo = 0;
  std::size_t hi = order.size();  // planWith(hi) places
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    GroupPlan plan = planWith(mid);
    if (plan.status == GroupPlanStatus::kPlanned) {
      hi = mid;
      best = std::move(plan);
    } else {
      lo = mid + 1;
    }
  }
  return best;
}

// The least-cost plan. The plan over the whole emptied cluster picks a domain by the planner's own
// order (best fit on what would be free), which knows nothing of what freeing it costs. So that
// domain, and each other domain of the plan's level that holds a candidate, is planned alone with
// its cheapest candidates emptied first; the plan that evicts the fewest GPU-holding victims (then
// the lowest top priority) wins, the planner's domain on a tie. A plan held by no level's domain is
// refined over every node.
GroupPlan leastCostPlan(GroupPlan plan, const GroupPlanInput& in,
                        std::span<const PlanChoice> choices,
                        std::span<const PreemptCandidate> candidates,
                        const std::map<std::string_view, std::size_t>& candidateAt,
                        const Policy& policy) {
  std::vector<std::size_t> subset;
  const auto consider = [&](const auto& inside) {
    subset.clear();
    for (std::size_t i = 0; i < choices.size(); ++i) {
      if (inside(choices[i])) subset.push_back(i);
    }
    return cheapestPlan(in, choices, subset, candidates, policy);
  };
  if (plan.level < 0) {
    std::optional<GroupPlan> refined = consider([](const PlanChoice&) { return true; });
    if (refined &&
        evictions(*refined, candidates, candidateAt) < evictions(plan, candidates, candidateAt)) {
      return std::move(*refined);
    }
    return plan;
  }
  const auto level = static_cast<std::size_t>(plan.level);
  const std::uint32_t chosen = plan.domain[level];
  std::vector<std::uint32_t> domains;
  if (chosen != kNoDomain && chosen != kMixedDomain) domains.push_back(chosen);
  for (const PlanChoice& c : choices) {
    const std::uint32_t d = c.asIs.facts->domain[level];
    if (d == kNoDomain || !c.isCandidate) continue;
    if (std::find(domains.begin(), domains.end(), d) == domains.end()) domains.push_back(d);
  }
  EvictionCost cost = evictions(plan, candidates, candidateAt);
  for (const std::uint32_t d : domains) {
    if (cost.victims == 0) break;
    std::optional<GroupPlan> alone =
        consider([&](const PlanChoice& c) { return c.asIs.facts->domain[level] == d; });
    if (!alone) continue;
    const EvictionCost aloneCost = evictions(*alone, candidates, candidateAt);
    if (aloneCost < cost) {
      cost = aloneCost;
      plan = std::move(*alone);
    }
  }
  return plan;
}

bool waitingMember(const GroupMemberView& members, std::string_view uid) {
  return std::any_of(members.waiting.begin(), members.waiting.end(),
                     [&](const WaitingMember& m) { return m.uid == uid; });
}

}  // namespace

std::optional<std::vector<GroupPreempt>> groupPreemption(
    const PodInfo& pod, const PodDemand& demand, const PodGroupRef* podGroup,
    const ClusterSnapshot& snapshot, const ClusterBackend* cluster,
    std::span<const PreemptCandidate> candidates, std::span<const AnsweredMember> answered) {
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
  std::vector<PlanChoice> choices;
  std::vector<std::string> names;
  snapshot.nodes.forEach(
      [&](const std::string& name, const NodeStateConstSharedPtr&) { names.push_back(name); });
  // Facts are counted here from each state, for the node as it is and (a candidate) emptied;
  // the reserve keeps the pointers to them valid.
  facts.reserve(names.size() + candidates.size());
  emptied.reserve(names.size());
  for (const std::string& name : names) {
    const NodeState* state = snapshot.find(name);
    const NodeGroupFacts* published = snapshot.nodes.groupFacts(name);
    if (state == nullptr || published == nullptr) continue;
    facts.push_back(nodeGroupFacts(*state, published->domain, policy));
    PlanChoice choice;
    choice.asIs = GroupPlanNode{name, state, &facts.back()};
    choice.emptied = choice.asIs;
    if (const auto it = candidateAt.find(name); it != candidateAt.end()) {
      emptied.push_back(nodeStateWithout(*state, candidates[it->second].victims, policy));
      facts.push_back(nodeGroupFacts(*emptied.back(), published->domain, policy));
      choice.emptied = GroupPlanNode{name, emptied.back().get(), &facts.back()};
      choice.candidate = it->second;
      choice.isCandidate = true;
    }
    choices.push_back(choice);
  }
  std::vector<GroupPlanNode> nodes;
  nodes.reserve(choices.size());
  for (const PlanChoice& choice : choices)
    nodes.push_back(choice.emptied);

  const GroupMemberView& members = snapshot.membersOrNone(ref.key);
  std::vector<GroupDomainIds> anchors;
  for (const std::string& node : members.placedNodes) {
    if (const NodeGroupFacts* f = snapshot.nodes.groupFacts(node)) anchors.push_back(f->domain);
  }
  // The other members kube-scheduler nominated (its preemption for them is under way, their
  // victims may still hold the GPUs): they will land there, so the group is planned around them
  // as around placed members. Without this a member's preempt that comes while the previous
  // member's victims terminate plans the whole group afresh and may free a second domain.
  std::int64_t nominated = 0;
  const auto nominatedAt = [&](const std::string& node) {
    ++nominated;
    if (const NodeGroupFacts* f = snapshot.nodes.groupFacts(node)) anchors.push_back(f->domain);
  };
  for (const auto& [uid, node] : members.nominated) {
    if (uid != pod.uid) nominatedAt(node);
  }
  // The members whose preempt was answered a moment ago and that the snapshot still shows waiting:
  // kube-scheduler's nomination of them is on its way (a status write, then the watch), and until
  // it arrives they count as nominated for the node their answer kept. A member nominated or
  // bound meanwhile is counted above instead, one deleted no longer waits.
  for (const AnsweredMember& member : answered) {
    if (member.uid != pod.uid && waitingMember(members, member.uid)) nominatedAt(member.node);
  }
  const std::int64_t toPlace =
      *ref.size - static_cast<std::int64_t>(members.placedNodes.size()) - nominated;
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
    plan = leastCostPlan(std::move(plan), in, choices, candidates, candidateAt, policy);
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
