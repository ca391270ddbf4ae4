#pragma once
// Sizes of the objects that own pod groups whose pods do not carry their size: a
// scheduling.k8s.io PodGroup (spec.schedulingPolicy.gang.minCount), a batch Job (spec.parallelism,
// at most spec.completions) and a JobSet (the sum over spec.replicatedJobs of replicas times the
// Job template's parallelism). A cluster file lists them beside its nodes and pods; watches of
// those objects fill the same table. Thread-safe: requests look sizes up while a watch updates it.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "base/mutex.h"
#include "base/result.h"
#include "group/pod_group.h"

namespace gte::json {
class JsonReader;
}

namespace gte::cluster {

struct GroupOwnerSize {
  GroupOwnerKind kind = GroupOwnerKind::kPodGroup;
  std::string ns;
  std::string name;
  std::optional<std::int64_t> size;  // unset: the object states none (a PodGroup's basic policy)
  std::string resourceVersion;       // metadata.resourceVersion, where a watch resumes
  // A Job's spec.completionMode is Indexed (only indexed Jobs name pod groups).
  bool indexed = false;
  // A PodGroup's status condition PodGroupInitiallyScheduled is False with reason Unschedulable:
  // kube-scheduler's gang cycle gave up on the group (it retries it later).
  bool unschedulable = false;
};

// Reads one PodGroup, Job or JobSet object (JSON). Errors name the field.
Result<GroupOwnerSize> parseGroupOwner(std::string_view json, GroupOwnerKind kind);
// The same from a reader standing at the object, to its end and no further (a list item or a
// watch event's object).
Result<GroupOwnerSize> readGroupOwner(json::JsonReader& reader, GroupOwnerKind kind);

class GroupOwnerSizes final : public GroupSizeLookup {
 public:
  // A size outside 1..kMaxGroupSize is kept as unknown: such a group is placed pod by pod.
  void put(const GroupOwnerSize& owner);
  // Replaces every object of `kind` with `owners` (a watch's full list).
  void replaceKind(GroupOwnerKind kind, const std::vector<GroupOwnerSize>& owners);
  void erase(GroupOwnerKind kind, std::string_view ns, std::string_view name);
  std::optional<std::int64_t> groupSize(GroupOwnerKind kind, std::string_view ns,
                                        std::string_view name) const override;
  std::size_t size() const;

 private:
  using Key = std::tuple<GroupOwnerKind, std::string, std::string>;
  mutable Mutex mutex_;
  std::map<Key, std::optional<std::int64_t>> sizes_ GTE_GUARDED_BY(mutex_);
};

}  // namespace gte::cluster
