#include "cluster/static_cluster_backend.h"

namespace gte::cluster {

Result<std::unique_ptr<StaticClusterBackend>> StaticClusterBackend::fromFile(
    const std::string& path, PolicyConstSharedPtr policy, ClusterStateOptions options) {
  auto contents = loadClusterFile(path);
  if (!contents) return std::move(contents).error();
  return std::make_unique<StaticClusterBackend>(std::move(*contents), std::move(policy),
                                                std::move(options));
}

StaticClusterBackend::StaticClusterBackend(ClusterFileContents contents,
                                           PolicyConstSharedPtr policy, ClusterStateOptions options)
    : state_(std::move(policy), std::move(options)) {
  setGroupPlans(&state_);
  for (const GroupOwnerSize& owner : contents.groupOwners)
    groupOwners_.put(owner);
  state_.setGroupSizes(&groupOwners_);
  std::vector<ObservedPod> pods;
  pods.reserve(contents.pods.size());
  for (FilePod& filePod : contents.pods) {
    filePods_[filePod.pod.uid] = filePod.pod;
    uidByName_[filePod.pod.ns + "/" + filePod.pod.name] = filePod.pod.uid;
    // No bind time in the file: the pod predates the labels, which therefore include it.
    pods.push_back(ObservedPod{std::move(filePod.pod), filePod.boundAt.value_or(0)});
  }
  state_.replaceNodes(std::move(contents.nodes));
  state_.replacePods(std::move(pods));
  state_.setSynced(true);
}

Status StaticClusterBackend::bind(const BindRequest& request) {
  std::string uid = request.podUid;
  if (filePods_.count(uid) == 0) {
    const auto byName = uidByName_.find(request.podNamespace + "/" + request.podName);
    if (byName == uidByName_.end()) {
      return Error{ErrorCode::kNotFound, "pod " + request.podNamespace + "/" + request.podName +
                                             " is not in the cluster file"};
    }
    uid = byName->second;
  }
  auto reserved = state_.reserve(filePods_.at(uid), request.node);
  if (!reserved) return std::move(reserved).error();
  state_.markBound(uid);
  return Ok{};
}

std::size_t StaticClusterBackend::expireHolds() {
  const std::size_t before = state_.heldSlotCount();
  state_.expireReservations();
  const std::size_t after = state_.heldSlotCount();
  return before > after ? before - after : 0;
}

std::optional<PodInfo> StaticClusterBackend::podByUid(const std::string& uid) const {
  return state_.podByUid(uid);
}

Result<PodInfo> StaticClusterBackend::podByName(const std::string& ns,
                                                const std::string& name) const {
  const auto byName = uidByName_.find(ns + "/" + name);
  if (byName == uidByName_.end()) {
    return Error{ErrorCode::kNotFound, "pod " + ns + "/" + name + " is not in the cluster file"};
  }
  return filePods_.at(byName->second);
}

std::vector<PodInfo> StaticClusterBackend::podsOnNode(const std::string& node) const {
  return state_.podsOnNode(node);
}

}  // namespace gte::cluster
