#include "service/group_requests.h"

#include <algorithm>
#include <chrono>

#include "group/member_answers.h"
#include "group/member_pin.h"
#include "metrics/metrics.h"
#include "service/cluster_backend.h"
#include "service/group_outcome.h"
#include "service/group_plan_store.h"
#include "snapshot/cluster_snapshot.h"

namespace gte {
namespace {

// A commit that finds its GPUs taken meanwhile plans again on the newest snapshot, this often.
constexpr int kCommitAttempts = 3;

CommittedGroupPlanConstSharedPtr committedPlan(const ClusterSnapshot& snapshot,
                                               std::string_view key) {
  if (!snapshot.groupPlans) return nullptr;
  const auto it = snapshot.groupPlans->find(key);
  return it == snapshot.groupPlans->end() ? nullptr : it->second;
}

bool samePod(const WaitingMember& a, const PodInfo& b) {
  return a.uid.empty() || b.uid.empty() ? a.ns == b.ns && a.name == b.name : a.uid == b.uid;
}

GroupAnswers answersFrom(const CommittedGroupPlan& plan, const Resolved& resolved,
                         const PodInfo& pod, const PodDemand& demand) {
  const std::vector<const NodeState*> open = pinnedStates(plan, *resolved.snapshot, pod, demand);
  return memberAnswers(plan, resolved.candidates, resolved.groupFacts, open,
                       resolved.snapshot->groupDomains.get());
}

struct PlanInputs {
  std::vector<PodDemand> members;  // this pod's first
  std::vector<GroupDomainIds> anchors;
  std::vector<std::string> anchorNodes;
};

// The members still to place: this pod, the members the snapshot holds waiting (their own
// demands, parsed when they changed), and as many more like this pod as the size says; the members
// already placed anchor the plan.
PlanInputs membersToPlace(const PodGroupRef& ref, const PodInfo& pod, const PodDemand& demand,
                          const ClusterSnapshot& snapshot) {
  PlanInputs in;
  const GroupMemberView& known = snapshot.membersOrNone(ref.key);
  for (const std::string& node : known.placedNodes) {
    in.anchorNodes.push_back(node);
    if (const NodeGroupFacts* facts = snapshot.nodes.groupFacts(node)) {
      in.anchors.push_back(facts->domain);
    }
  }
  const std::int64_t toPlace = *ref.size - static_cast<std::int64_t>(known.placedNodes.size());
  if (toPlace <= 0) return in;
  in.members.push_back(demand);
  for (const WaitingMember& other : known.waiting) {
    if (static_cast<std::int64_t>(in.members.size()) >= toPlace) break;
    if (samePod(other, pod)) continue;
    if (other.demand && !other.demand->empty()) in.members.push_back(*other.demand);
  }
  while (static_cast<std::int64_t>(in.members.size()) < toPlace)
    in.members.push_back(demand);
  return in;
}

GroupPlan makePlan(const PodGroupRef& ref, const PlanInputs& inputs, const Resolved& resolved) {
  std::vector<GroupPlanNode> nodes;
  nodes.reserve(resolved.candidates.size());
  for (std::size_t i = 0; i < resolved.candidates.size() && i < resolved.groupFacts.size(); ++i) {
    const NodeCandidate& candidate = resolved.candidates[i];
    if (candidate.state != nullptr && resolved.groupFacts[i] != nullptr) {
      nodes.push_back(GroupPlanNode{candidate.name, candidate.state, resolved.groupFacts[i]});
    }
  }
  const std::string group = ref.ns + "/" + ref.name;
  GroupPlanInput in;
  in.group = group;
  in.levels = ref.levels;
  in.sameModel = ref.sameModel;
  in.domainNames = resolved.snapshot->groupDomains.get();
  in.nodes = nodes;
  in.members = inputs.members;
  in.anchors = inputs.anchors;
  in.explain = true;  // verdicts are kept without text: explain words them later
  return planGroup(in, *resolved.policy);
}

CommittedGroupPlan committable(const PodGroupRef& ref, PlanInputs inputs, GroupPlan plan) {
  CommittedGroupPlan out;
  out.key = ref.key;
  out.group = ref.ns + "/" + ref.name;
  out.size = ref.size.value_or(0);
  out.levels = ref.levels;
  out.demands = std::move(inputs.members);
  out.anchors = std::move(inputs.anchorNodes);
  out.claimedBy.assign(plan.slots.size(), std::string());
  out.plan = std::move(plan);
  return out;
}

// The member's filter records the slot it is answered with, so that no later member is given it
// whatever the cache has seen of the others by then (group/member_pin.h). Another member pinned
// first: it picks again on the plan as published. Returns the plan to answer from.
CommittedGroupPlanConstSharedPtr pinned(GroupPlanStore& store,
                                        CommittedGroupPlanConstSharedPtr plan,
                                        const ClusterSnapshot& snapshot, const PodInfo& pod,
                                        const PodDemand& demand) {
  if (pod.uid.empty()) return plan;
  for (int attempt = 0; attempt < kCommitAttempts; ++attempt) {
    const auto slot = memberSlot(*plan, snapshot, pod, demand);
    if (!slot || plan->pinnedUid(*slot) == pod.uid) return plan;
    CommittedGroupPlanConstSharedPtr next =
        store.pinGroupMember(plan->key, plan->sequence, *slot, pod.uid);
    if (!next) return plan;  // the plan ended meanwhile: answered from the one read
    plan = std::move(next);
  }
  return plan;
}

}  // namespace

std::optional<std::size_t> memberSlot(const CommittedGroupPlan& plan,
                                      const ClusterSnapshot& snapshot, const PodInfo& pod,
                                      const PodDemand& demand) {
  std::vector<PinCandidate> others;
  if (const GroupMemberView* members = snapshot.members(plan.key)) {
    for (const WaitingMember& other : members->waiting) {
      if (samePod(other, pod)) continue;
      if (other.demand && sameShape(*other.demand, demand)) {
        others.push_back(PinCandidate{other.uid, other.name});
      }
    }
  }
  return pinnedSlot(plan, demand, PinCandidate{pod.uid, pod.name}, others);
}

std::vector<const NodeState*> pinnedStates(const CommittedGroupPlan& plan,
                                           const ClusterSnapshot& snapshot, const PodInfo& pod,
                                           const PodDemand& demand) {
  std::vector<const NodeState*> out;
  if (const auto slot = memberSlot(plan, snapshot, pod, demand)) {
    if (const NodeState* state = snapshot.find(plan.plan.slots[*slot].node)) out.push_back(state);
  }
  return out;
}

GroupDecision decideGroup(const PodInfo& pod, const CompiledPod& compiled, Resolved& resolved,
                          const ClusterBackend* cluster, GroupWrite write,
                          const Reresolve& reresolve, metrics::Metrics* metrics) {
  GroupDecision out;
  // A pod that rejects itself is rejected on every node already; one of no group is decided alone.
  if (compiled.ownError() != nullptr || !compiled.grouped()) return out;
  const PodDemand& demand = *compiled.demand;
  out.ref = *compiled.groupRef();
  const PodGroupRef& ref = *out.ref;
  const bool counting = write == GroupWrite::kCommit && metrics != nullptr;
  GroupPlanStore* store = cluster != nullptr ? cluster->groupPlans() : nullptr;
  if (resolved.nodesMode || store == nullptr || !resolved.snapshot) {
    out.note =
        "pod groups are planned with a cluster cache only (nodeCacheCapable: true): "
        "placed pod by pod";
    return out;
  }
  if (demand.empty()) {
    out.note = "the pod asks for no GPU: it holds no slot of its group";
    return out;
  }
  for (int attempt = 0; attempt < kCommitAttempts; ++attempt) {
    if (auto committed = committedPlan(*resolved.snapshot, ref.key)) {
      if (write == GroupWrite::kCommit) {
        committed = pinned(*store, std::move(committed), *resolved.snapshot, pod, demand);
      }
      out.answers = answersFrom(*committed, resolved, pod, demand);
      out.committed = std::move(committed);
      return out;
    }
    if (!ref.size) {
      out.note = "group size unknown (" + ref.sizeFrom + "): placed pod by pod";
      if (counting) metrics->countGroupDecision(groupOutcomeName(GroupOutcome::kSizeUnknown));
      return out;
    }
    const auto started = std::chrono::steady_clock::now();
    PlanInputs inputs = membersToPlace(ref, pod, demand, *resolved.snapshot);
    if (inputs.members.empty()) {
      out.note = "every member of the group is placed already: placed pod by pod";
      return out;
    }
    GroupPlan plan = makePlan(ref, inputs, resolved);
    out.proposal = plan;
    if (counting && plan.status != GroupPlanStatus::kPlanned) {
      metrics->countGroupDecision(groupOutcomeName(groupOutcomeOf(plan.status)));
    }
    switch (plan.status) {
      case GroupPlanStatus::kNoRoom:
      case GroupPlanStatus::kNeverFits:
        out.answers = refuseEvery(resolved.candidates.size(),
                                  plan.status == GroupPlanStatus::kNoRoom ? Verdict::kUnschedulable
                                                                          : Verdict::kUnresolvable,
                                  plan.reason);
        return out;
      case GroupPlanStatus::kUnplaced:
      case GroupPlanStatus::kUnsupported:
        out.note = plan.reason;
        return out;
      case GroupPlanStatus::kPlanned:
        break;
    }
    CommittedGroupPlan candidate = committable(ref, std::move(inputs), std::move(plan));
    if (write == GroupWrite::kReadOnly) {
      out.answers = answersFrom(candidate, resolved, pod, demand);
      out.uncommitted = std::make_shared<const CommittedGroupPlan>(std::move(candidate));
      return out;
    }
    auto committed = store->commitGroupPlan(std::move(candidate));
    if (committed && *committed) {
      out.committedHere = (*committed)->plan.slots == out.proposal->slots;
      if (counting && out.committedHere) {
        metrics->countGroupDecision(groupOutcomeName(GroupOutcome::kPlanned));
        metrics->observeGroupPlanning(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      }
      CommittedGroupPlanConstSharedPtr answering =
          pinned(*store, std::move(*committed), *resolved.snapshot, pod, demand);
      out.answers = answersFrom(*answering, resolved, pod, demand);
      out.committed = std::move(answering);
      return out;
    }
    if (counting) metrics->countGroupDecision(groupOutcomeName(GroupOutcome::kStale));
    if (!reresolve) break;
    auto again = reresolve();
    if (!again) break;
    resolved = std::move(*again);
  }
  out.proposal.reset();
  out.note =
      "the group's plan could not be committed (its GPUs were taken meanwhile): placed pod "
      "by pod";
  return out;
}

}  // namespace gte
