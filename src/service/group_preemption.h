#pragma once
// Preemption for a member of a pod group (docs/groups.md#preemption): victims are worth evicting
// only where the whole group can then land. With the group's plan committed, candidates outside
// the plan's required domains are dropped; without one, the group is planned on the cluster as it
// would be with every candidate's victims gone, and only the candidates that plan puts members on
// are kept: the victims chosen make room for the group's domain, not for one member at a time.
// Among the domains of the plan's level that could hold the group so, each planned with its
// cheapest candidates emptied first, the plan that evicts the fewest GPU-holding victims (then the
// lowest top priority among them, then the least work destroyed: their GPUs times the time they
// have run) is chosen, the planner's own domain on a tie. Members already placed, those
// kube-scheduler has nominated for a node (their victims may still be leaving), and those whose
// preempt the extender answered before the watch brought their nomination, anchor the plan to
// their domains and are not planned again.
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/node_state.h"
#include "core/pod_demand.h"
#include "group/pod_group.h"
#include "model/pod_info.h"

namespace gte {
class ClusterBackend;
struct ClusterSnapshot;

struct PreemptCandidate {
  std::string_view node;
  const NodeState* state = nullptr;  // in `snapshot`; null: not cached (dropped anyway)
  std::vector<std::string> victims;  // UIDs of the victims that hold GPUs
  // The highest priority among them (the lowest int64 when none): a tie-break between nodes and
  // domains that evict as many.
  std::int64_t topPriority = std::numeric_limits<std::int64_t>::min();
  // What evicting them destroys (core/preemption_planner.h, evictionWork): the last tie-break.
  double work = 0;
};

enum class GroupPreempt : std::uint8_t {
  kJudge,  // judged as any pod's candidate (planVictims)
  kDrop,   // the group cannot land whole with these victims gone
  kHeld,   // the group holds a slot here for the pod: no GPU victim is needed, only the others
};

// A member of the pod's group whose preempt this extender answered a moment ago
// (service/group_preemption_memory.h), and a node that answer kept: kube-scheduler nominates the
// member for one of those nodes, but the watch may not have brought the nomination yet.
struct AnsweredMember {
  std::string uid;
  std::string node;
};

// One answer per candidate; nullopt when the pod is in no group the extender plans (each candidate
// is then judged alone). `group`: the pod's group as compiled for the request (null: none).
// `answered`: the group's members whose preempt was answered lately; one the snapshot still shows
// waiting (neither nominated nor bound there yet) anchors the plan as a nominated member does.
std::optional<std::vector<GroupPreempt>> groupPreemption(
    const PodInfo& pod, const PodDemand& demand, const PodGroupRef* group,
    const ClusterSnapshot& snapshot, const ClusterBackend* cluster,
    std::span<const PreemptCandidate> candidates, std::span<const AnsweredMember> answered = {});

}  // namespace gte
