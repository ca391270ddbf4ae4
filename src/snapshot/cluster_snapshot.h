#pragma once
// The immutable view of the cluster one request decides on (readers load one pointer and
// nothing they hold ever changes): the policy and a
// NodeState per node. Handlers load the pointer once per request; builders publish new ones.
#include <cstdint>
#include <memory>
#include <string_view>

#include "core/node_state.h"
#include "core/scarce_sets.h"
#include "dra/dra_objects.h"
#include "group/committed_group_plan.h"
#include "group/group_domains.h"
#include "group/group_members.h"
#include "policy/policy.h"
#include "snapshot/cluster_health.h"
#include "snapshot/node_state_index.h"

namespace gte {

struct ClusterSnapshot {
  std::uint64_t generation = 0;  // bumps with every build that changed something
  // Names the node shards: two snapshots with the same non-zero value share every shard (a build
  // that rebuilt none keeps its predecessor's; one that rebuilt any takes a new value from a
  // process-wide counter, so no value is ever reused). 0: not built by a builder.
  std::uint64_t nodesGeneration = 0;
  PolicyConstSharedPtr policy;
  bool synced = false;   // the first full list of nodes and pods is in
  NodeStateIndex nodes;  // sharded: a build shares every shard no changed node is in
  // Pod groups: the names behind each node's domain ids, and the committed plans by group key
  // (never null in a built snapshot).
  GroupDomainNamesConstSharedPtr groupDomains;
  GroupPlanTableConstSharedPtr groupPlans;
  // ... and their members: placed members' nodes, waiting members with their parsed demands
  // (never null in a built snapshot).
  GroupMemberTableConstSharedPtr groupMembers;
  // DRA (docs/dra.md): the classes, claims and templates a request resolves a pod's claims
  // against (parsePodDemand); null when the cluster state does not watch DRA objects.
  dra::DraObjectsConstSharedPtr dra;
  ClusterHealth health;  // the nodes' topology-health figures, overall and per pool
  // The nodes holding each size of free all-NVLink set: what breaking one costs a score
  // (core/scarce_sets.h).
  ScarceSets scarceSets;

  // nullptr when the node is not known.
  const NodeState* find(std::string_view name) const noexcept { return nodes.find(name); }
  // A group's members; null when the cache knows none.
  const GroupMemberView* members(std::string_view key) const noexcept {
    if (!groupMembers) return nullptr;
    const auto it = groupMembers->find(key);
    return it == groupMembers->end() ? nullptr : it->second.get();
  }
  // A group's members; an empty view when the cache knows none.
  const GroupMemberView& membersOrNone(std::string_view key) const noexcept {
    static const GroupMemberView kNone;
    const GroupMemberView* found = members(key);
    return found != nullptr ? *found : kNone;
  }
  // The committed plan of a group; null when it has none.
  const CommittedGroupPlan* groupPlan(std::string_view key) const noexcept {
    if (!groupPlans) return nullptr;
    const auto it = groupPlans->find(key);
    return it == groupPlans->end() ? nullptr : it->second.get();
  }
};

using ClusterSnapshotConstSharedPtr = std::shared_ptr<const ClusterSnapshot>;

}  // namespace gte
