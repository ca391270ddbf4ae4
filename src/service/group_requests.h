#pragma once
// The pod-group part of filter, prioritize, explain and preempt (docs/groups.md): which group the
// pod belongs to, the group's plan (made and committed at its first member's filter, read from the
// snapshot by every later request), and the answers a member gets on each node
// (core/group_answers.h). A pod in no group takes none of these paths.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/compiled_pod.h"
#include "core/group_answers.h"
#include "core/pod_demand.h"
#include "group/committed_group_plan.h"
#include "group/group_plan.h"
#include "group/pod_group.h"
#include "model/pod_info.h"
#include "service/resolve_nodes.h"

namespace gte {
class ClusterBackend;
class GroupPlanStore;
namespace metrics {
class Metrics;
}

struct GroupDecision {
  std::optional<PodGroupRef> ref;  // unset: the pod belongs to no group
  // The committed plan the answers come from; null when there is none (yet).
  CommittedGroupPlanConstSharedPtr committed;
  // The plan this request made (committed or not, or a refusal); unset when it read one.
  std::optional<GroupPlan> proposal;
  // A plan made here and not committed (prioritize, explain): what the answers come from then.
  CommittedGroupPlanConstSharedPtr uncommitted;
  std::optional<GroupAnswers> answers;  // unset: decided as a pod without a group
  std::string note;                     // why the member is placed pod by pod
  bool committedHere = false;           // this request committed the group's plan

  const GroupAnswers* answersOrNull() const noexcept { return answers ? &*answers : nullptr; }
};

enum class GroupWrite : std::uint8_t {
  kCommit,    // filter: a plan made here is committed (holds its slots)
  kReadOnly,  // prioritize, explain, preempt: a plan made here is only proposed
};

// The held slot the member is pinned to (group/member_pin.h: the one its filter recorded, else
// what its rank among the waiting members not pinned yet, from the snapshot, gives it), or none
// when the plan holds no slot for it.
std::optional<std::size_t> memberSlot(const CommittedGroupPlan& plan,
                                      const ClusterSnapshot& snapshot, const PodInfo& pod,
                                      const PodDemand& demand);

// The member's planned node: the state, in `snapshot`, of the node of its slot (memberSlot), or
// none when the plan holds no slot for it. Only that node answers kPlanned: keeping a member on
// every node where its group holds a slot of its shape would let a gang cycle send two members to a
// node that holds one.
std::vector<const NodeState*> pinnedStates(const CommittedGroupPlan& plan,
                                           const ClusterSnapshot& snapshot, const PodInfo& pod,
                                           const PodDemand& demand);

// Resolves again from the newest snapshot (a commit found its plan stale).
using Reresolve = std::function<Result<Resolved>()>;

// The pod's group and its answers on `resolved` (replaced by a newer resolution when a commit had
// to plan again), from the group identity and demand compiled once for the request (`compiled`;
// a pod that rejects itself, or names no group, gets no group decision). `metrics` may be null.
GroupDecision decideGroup(const PodInfo& pod, const CompiledPod& compiled, Resolved& resolved,
                          const ClusterBackend* cluster, GroupWrite write,
                          const Reresolve& reresolve, metrics::Metrics* metrics);

}  // namespace gte
