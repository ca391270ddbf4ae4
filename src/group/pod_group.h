#pragma once
// Which pod group a pod belongs to, and how many members the group has: read from the pod alone,
// plus the sizes of owner objects (PodGroup, JobSet, Job) a GroupSizeLookup reports. Parsed once
// per request with the pod's demand. Sources, first match wins (docs/groups.md#what-a-group-is):
//   1. annotation `<prefix>group` (size: `<prefix>group-size`);
//   2. spec.schedulingGroup.podGroupName (size: the PodGroup's gang minCount);
//   3. LeaderWorkerSet: label leaderworkerset.sigs.k8s.io/group-key (or name + group-index), size
//      from the annotation leaderworkerset.sigs.k8s.io/size;
//   4. Kueue pod group: label kueue.x-k8s.io/pod-group-name, size from the annotation
//      kueue.x-k8s.io/pod-group-total-count;
//   5. JobSet: label jobset.sigs.k8s.io/jobset-name (size: the JobSet's replicas x parallelism);
//   6. indexed Job: labels batch.kubernetes.io/job-name and
//   batch.kubernetes.io/job-completion-index
//      (size: the Job's parallelism, capped by its completions).
// `<prefix>group-size` may state the size of a group of any source; where the source also knows
// it, the two must agree. Pure: no I/O, clock, locks or globals.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/pod_info.h"
#include "policy/group_levels.h"
#include "policy/policy.h"

namespace gte {

enum class GroupSource : std::uint8_t {
  kAnnotation,
  kPodGroup,
  kLeaderWorkerSet,
  kKueue,
  kJobSet,
  kIndexedJob,
};
// "annotation", "podgroup", "leaderworkerset", "kueue", "jobset", "job": the source part of a key.
std::string_view groupSourceName(GroupSource source) noexcept;

// The objects whose spec holds a group's size when its pods do not.
enum class GroupOwnerKind : std::uint8_t {
  kPodGroup,  // scheduling.k8s.io PodGroup: spec.schedulingPolicy.gang.minCount
  kJobSet,    // jobset.x-k8s.io JobSet: sum over replicatedJobs of replicas x parallelism
  kJob,       // batch Job: spec.parallelism, capped by spec.completions
};
std::string_view groupOwnerKindName(GroupOwnerKind kind) noexcept;

// Sizes of owner objects, filled by watches of those objects or read from a cluster file.
class GroupSizeLookup {
 public:
  virtual ~GroupSizeLookup() = default;
  // nullopt: the object is not known (not watched, not seen yet, or it states no size).
  virtual std::optional<std::int64_t> groupSize(GroupOwnerKind kind, std::string_view ns,
                                                std::string_view name) const = 0;
};

struct PodGroupRef {
  GroupSource source = GroupSource::kAnnotation;
  std::string ns;
  std::string name;  // inside its source and namespace
  std::string key;   // "<namespace>/<source>/<name>": what plans and holds are kept by
  // Members in all (the pod included); nullopt: unknown, the members are placed one by one.
  std::optional<std::int64_t> size;
  std::string sizeFrom;  // where the size (or the want of one) comes from, for explain
  // The policy's levels with the pod's `<prefix>group-levels` modes applied; index i is the
  // policy's level i.
  std::vector<GroupLevel> levels;
  bool levelsOverridden = false;
  // The pod's `<prefix>model=preferred|ignore` entry of `<prefix>group-levels`; nullopt: the
  // policy's groups.sameModel.
  std::optional<GroupLevelMode> sameModel;
};

inline constexpr std::string_view kGroupAnnotation = "group";
inline constexpr std::string_view kGroupSizeAnnotation = "group-size";
inline constexpr std::string_view kGroupLevelsAnnotation = "group-levels";
// The entry of `<prefix>group-levels` that sets one-GPU-model planning (the node label that
// carries the GPU model, `<prefix>model`).
inline constexpr std::string_view kGroupModelKey = "model";

// nullopt when the pod belongs to no group. An invalid or contradictory group annotation is an
// error naming it (the caller rejects every node with it, like any invalid annotation):
// "annotation gputopo.dev/group-size: want an integer from 1 to 10000; got 'many'".
// `sizes` may be null (no owner objects are known).
Result<std::optional<PodGroupRef>> parsePodGroup(const PodInfo& pod, const Policy& policy,
                                                 const GroupSizeLookup* sizes);

// The group key alone (no sizes, no validation of sizes or levels): what the cluster cache files
// members under. nullopt: the pod names no group.
std::optional<std::string> podGroupKey(const PodInfo& pod, const Policy& policy);

// The labels and annotations of other projects that identify a group or carry its size: the pod
// cache keeps these (and the extender's own annotations) of every pod it trims.
bool isGroupLabel(std::string_view key) noexcept;
bool isGroupAnnotation(std::string_view key) noexcept;

}  // namespace gte
