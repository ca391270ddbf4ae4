#pragma once
// Feeds the owner-size table from a watch of one owner kind (PodGroups, Jobs or JobSets; see
// group_owner_watches.h), and tells the cluster cache when kube-scheduler gives up on a PodGroup:
// its status condition PodGroupInitiallyScheduled turning False with reason Unschedulable (the
// gang cycle failed) releases the group's holds, so its next cycle plans on what is free then
// rather than waiting out the hold TTL. Jobs other than indexed ones name no group and are not
// kept.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster_state.h"
#include "cluster/group_owner_sizes.h"
#include "kube/object_sink.h"

namespace gte::cluster {

class GroupOwnerSink final : public kube::ObjectSink<GroupOwnerSize> {
 public:
  // onListed runs after every completed full list.
  GroupOwnerSink(GroupOwnerKind kind, std::shared_ptr<GroupOwnerSizes> sizes,
                 std::shared_ptr<ClusterState> state, std::function<void()> onListed);
  void beginList() override;
  Status listItem(GroupOwnerSize owner) override;
  void endList() override;
  Status apply(kube::WatchEventType type, GroupOwnerSize owner) override;

 private:
  // An object of another kind is an error (the reader was handed the wrong resource).
  Status check(const GroupOwnerSize& owner) const;
  bool kept(const GroupOwnerSize& owner) const;
  // Releases the PodGroup's holds when it just turned unschedulable; remembers its condition.
  void noteCondition(const GroupOwnerSize& owner);

  const GroupOwnerKind kind_;
  std::shared_ptr<GroupOwnerSizes> sizes_;
  std::shared_ptr<ClusterState> state_;
  std::function<void()> onListed_;
  std::vector<GroupOwnerSize> listing_;
  // PodGroups by "namespace/name": whether the last object seen was unschedulable.
  std::map<std::string, bool> unschedulable_;
};

}  // namespace gte::cluster
