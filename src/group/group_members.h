#pragma once
// A pod group's members as the snapshot publishes them (ClusterSnapshot::groupMembers): the
// nodes of the members placed (bound or being bound) and the members waiting for a node, each with
// its demand parsed once when the member changed, not per request. A member's request reads them
// from the snapshot it loaded, without a lock and without parsing another pod. Plain data.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/pod_demand.h"

namespace gte {

struct WaitingMember {
  std::string ns;
  std::string name;
  std::string uid;
  // Parsed under the snapshot's policy and DRA objects; unset when the member's request or
  // annotations are invalid (it rejects itself, and holds no slot).
  std::optional<PodDemand> demand;
  // The demand read DRA objects (claims, DRA-backed nvidia.com/gpu): parsed again when they change.
  bool readsDra = false;
};

struct GroupMemberView {
  std::vector<std::string> placedNodes;  // one per placed member
  std::vector<WaitingMember> waiting;    // by UID
  // (UID, node) of the members kube-scheduler nominated for a node (status.nominatedNodeName)
  // and has not bound: their preemption's victims may still hold the GPUs there.
  std::vector<std::pair<std::string, std::string>> nominated;
};

using GroupMemberViewConstSharedPtr = std::shared_ptr<const GroupMemberView>;
using GroupMemberTable = std::map<std::string, GroupMemberViewConstSharedPtr, std::less<>>;
using GroupMemberTableConstSharedPtr = std::shared_ptr<const GroupMemberTable>;

}  // namespace gte
