#pragma once
// The ClusterBackend for --cluster-file: the cluster is what the file says, ready at once, and
// bind records the reservation and marks the pod bound in memory (nothing is written anywhere), so
// a demo or benchmark can schedule many pods one after another without double booking.
#include <memory>
#include <string>
#include <unordered_map>

#include "base/result.h"
#include "cluster/cluster_file.h"
#include "cluster/cluster_state.h"
#include "service/cluster_backend.h"

namespace gte::cluster {

class StaticClusterBackend final : public ClusterBackend {
 public:
  // Reads the file (JSON or YAML; see cluster_file.h). Errors name the file and the item index.
  static Result<std::unique_ptr<StaticClusterBackend>> fromFile(const std::string& path,
                                                                PolicyConstSharedPtr policy,
                                                                ClusterStateOptions options = {});
  StaticClusterBackend(ClusterFileContents contents, PolicyConstSharedPtr policy,
                       ClusterStateOptions options = {});

  ClusterSnapshotConstSharedPtr snapshot() const override { return state_.snapshot(); }
  bool ready() const override { return true; }
  bool healthy(std::string* /*why*/) const override { return true; }
  // The pod must be in the file (pending pods are kept for this). Errors: kNotFound (pod or node
  // unknown), kFailedPrecondition (no room, or bound elsewhere).
  Status bind(const BindRequest& request) override;
  std::optional<PodInfo> podByUid(const std::string& uid) const override;
  // Any pod of the file, pending ones included, as the file has it.
  Result<PodInfo> podByName(const std::string& ns, const std::string& name) const override;
  std::vector<PodInfo> podsOnNode(const std::string& node) const override;

  // The PodGroups, Jobs and JobSets of the file.
  const GroupSizeLookup* groupSizes() const override { return &groupOwners_; }
  // Releases pod-group holds past their TTL (a file has no watch to confirm binds, so
  // reservations end at bind; holds need this tick). Returns the slots released.
  std::size_t expireHolds();
  // For the policy watcher's listener.
  void setPolicy(PolicyConstSharedPtr policy) { state_.setPolicy(std::move(policy)); }
  const ClusterState& state() const { return state_; }
  // The file's pods that are not finished (Succeeded or Failed), whatever they request.
  std::size_t filePodCount() const noexcept { return filePods_.size(); }

 private:
  ClusterState state_;
  GroupOwnerSizes groupOwners_;
  // Every non-terminal pod of the file by UID (bind needs a pending pod's requests, which the
  // cache does not keep), and UIDs by "namespace/name" for requests without a UID.
  std::unordered_map<std::string, PodInfo> filePods_;
  std::unordered_map<std::string, std::string> uidByName_;
};

}  // namespace gte::cluster
