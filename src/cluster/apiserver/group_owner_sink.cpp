#include "cluster/apiserver/group_owner_sink.h"

#include "log/logger.h"

namespace gte::cluster {

GroupOwnerSink::GroupOwnerSink(GroupOwnerKind kind, std::shared_ptr<GroupOwnerSizes> sizes,
                               std::shared_ptr<ClusterState> state, std::function<void()> onListed)
    : kind_(kind),
      sizes_(std::move(sizes)),
      state_(std::move(state)),
      onListed_(std::move(onListed)) {}

Status GroupOwnerSink::check(const GroupOwnerSize& owner) const {
  if (owner.kind == kind_) return Ok{};
  return invalidArgument(std::string(groupOwnerKindName(owner.kind)) + " " + owner.ns + "/" +
                         owner.name + " in the " + std::string(groupOwnerKindName(kind_)) +
                         " watch");
}

bool GroupOwnerSink::kept(const GroupOwnerSize& owner) const {
  return owner.kind != GroupOwnerKind::kJob || owner.indexed;
}

void GroupOwnerSink::noteCondition(const GroupOwnerSize& owner) {
  if (owner.kind != GroupOwnerKind::kPodGroup) return;
  const std::string id = owner.ns + "/" + owner.name;
  bool& wasUnschedulable = unschedulable_[id];
  const bool turned = owner.unschedulable && !wasUnschedulable;
  wasUnschedulable = owner.unschedulable;
  if (!turned) return;
  if (const std::size_t released = state_->releasePodGroupHolds(owner.ns, owner.name);
      released > 0) {
    log::info("kube-scheduler gave up on a pod group: its holds are released",
              {{"podgroup", id}, {"slots", std::to_string(released)}});
  }
}

void GroupOwnerSink::beginList() {
  listing_.clear();
}

Status GroupOwnerSink::listItem(GroupOwnerSize owner) {
  if (auto s = check(owner); !s) return s;
  noteCondition(owner);
  if (kept(owner)) listing_.push_back(std::move(owner));
  return Ok{};
}

void GroupOwnerSink::endList() {
  sizes_->replaceKind(kind_, listing_);
  if (kind_ == GroupOwnerKind::kPodGroup) {
    // Forget the conditions of PodGroups the list no longer has.
    std::map<std::string, bool> listed;
    for (const GroupOwnerSize& owner : listing_) {
      const std::string id = owner.ns + "/" + owner.name;
      if (const auto it = unschedulable_.find(id); it != unschedulable_.end()) listed.insert(*it);
    }
    unschedulable_ = std::move(listed);
  }
  listing_ = {};
  onListed_();
}

Status GroupOwnerSink::apply(kube::WatchEventType type, GroupOwnerSize owner) {
  if (auto s = check(owner); !s) return s;
  if (type == kube::WatchEventType::kDeleted) {
    sizes_->erase(kind_, owner.ns, owner.name);
    unschedulable_.erase(owner.ns + "/" + owner.name);
    return Ok{};
  }
  noteCondition(owner);
  if (kept(owner)) {
    sizes_->put(owner);
  } else {
    sizes_->erase(kind_, owner.ns, owner.name);  // a Job whose completion mode changed
  }
  return Ok{};
}

}  // namespace gte::cluster
