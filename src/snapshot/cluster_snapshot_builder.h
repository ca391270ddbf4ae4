#pragma once
// Builds ClusterSnapshots incrementally: every change stamps the node with the
// next generation from one counter; build() re-derives only nodes stamped after the last build and
// shares every other NodeState with the previous snapshot. Entries are kept per NodeStateIndex
// shard: build() copies only the shards with a changed, added or removed node and shares every
// other shard's map with the previous snapshot. A new policy re-derives every node.
// The builder is the one owner of node records: it holds each node's NodeInfo and the state read
// from its labels (read once per label change), and the charges (pods and their devices) the
// cluster cache hands it.
// Each build also sums the nodes' topology-health figures (health/node_health.h): a node's figures
// are computed with its state, each changed shard's pool totals are summed again, and the 64
// shards' totals are merged into the snapshot's ClusterHealth. The nodes holding each size of free
// all-NVLink set (core/scarce_sets.h) are counted the same way.
// Not thread-safe: one owner (the cluster-state thread) feeds it and publishes the result.
#include <array>
#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/node_charges.h"
#include "core/node_content.h"
#include "core/plain_answers.h"
#include "dra_placement/dra_node_state.h"
#include "group/committed_group_plan.h"
#include "group/group_domains.h"
#include "group/group_members.h"
#include "health/node_health.h"
#include "model/node_info.h"
#include "snapshot/cluster_snapshot.h"

namespace gte {

struct SnapshotBuildStats {
  std::size_t rebuilt = 0;  // NodeStates derived in this build
  std::size_t shared = 0;   // NodeStates taken over unchanged
  std::size_t removed = 0;
};

class ClusterSnapshotBuilder {
 public:
  // `poolLabel`: the node label whose value groups nodes in the health figures (empty: the GPU
  // model).
  explicit ClusterSnapshotBuilder(PolicyConstSharedPtr policy, std::string poolLabel = {});

  // Adds or replaces a node, with its charges (null: none). A node whose content (labels, GPU and
  // MIG allocatable: sameNodeContent) and charges are unchanged keeps its generation, so build()
  // does not re-derive it.
  // Returns true when the node is new or one of those changed (its labels will be read again).
  bool upsertNode(NodeInfo node, NodeChargesConstSharedPtr charges = nullptr);
  // Replaces the charges of a known node (the common change: a pod bound or gone). False when the
  // node is unknown.
  bool setCharges(std::string_view name, NodeChargesConstSharedPtr charges);
  // The node's state as read from its current labels (reading them now if they changed since);
  // its derived facts may lag until build(). Null when the node is unknown. Valid until the next
  // call on the builder.
  const NodeState* read(std::string_view name);
  std::vector<std::string> names() const;
  void removeNode(std::string_view name);
  void setPolicy(PolicyConstSharedPtr policy);
  void setSynced(bool synced);
  // The pod-group plans the next snapshot publishes (null: none).
  void setGroupPlans(GroupPlanTableConstSharedPtr plans);
  // The pod groups' members the next snapshot publishes (null: none).
  void setGroupMembers(GroupMemberTableConstSharedPtr members);
  // The node's pod-group domain per policy level, as of its current labels (every kNoDomain for an
  // unknown node).
  GroupDomainIds groupDomains(std::string_view name);
  // The node's DRA state as of the last build (null: unknown node, no slice serves it, or not
  // built yet): what the cache's own checks of a node (its groups' holds) build its state with.
  DraNodeStateConstSharedPtr draState(std::string_view name) const;

  // DRA (docs/dra.md). The cluster state owns the slices and the allocated devices (claims'
  // allocations and the extender's own in flight) and updates them on this builder's thread;
  // build() reads them for the nodes marked since. `objects` carries the classes: a change of
  // objects (new classes) re-derives every node. Any of the three null turns DRA off.
  void setDra(const dra::SliceIndex* slices, const dra::AllocatedDevices* allocated,
              dra::DraObjectsConstSharedPtr objects);
  // New claims or classes with the same slices and allocations: a new catalog re-derives every
  // node, new claims alone only the snapshot's objects. No effect while DRA is off.
  void setDraObjects(dra::DraObjectsConstSharedPtr objects);
  // The node's slices or the devices allocated from them changed (SliceIndex::nodesOfPool names
  // the nodes a pool serves). False when the node is unknown.
  bool draNodeChanged(std::string_view name);
  // Every node (a slice without nodeName changed: it may serve any node).
  void draAllNodesChanged();

  // Returns the previous snapshot itself when nothing changed.
  ClusterSnapshotConstSharedPtr build();
  const SnapshotBuildStats& lastBuildStats() const noexcept { return stats_; }
  std::size_t nodeCount() const noexcept { return nodeCount_; }

 private:
  struct Entry {
    NodeInfo node;
    NodeChargesConstSharedPtr charges;
    std::uint64_t generation = 0;  // stamp of the last change
    // The policy `state`'s labels were read under: the rule both modes use. Reset when the content
    // changes (sameNodeContent at upsert), so a key that is current was read from `node`.
    NodeReadKey read;
    NodeStateConstSharedPtr state;  // the last state read or built for this node
    PlainAnswers plain;             // of `state` once built (not of a state only read)
    GroupDomainIds domains{kNoDomain, kNoDomain, kNoDomain, kNoDomain};  // read with the labels
    NodeHealth health;                                                   // of `state` once built
    std::string pool;  // the health figures' pool, as of `state`
    // Of `state` once built, kept so that rebuilding a shard reads the state of no node that did
    // not change (a group's commit rebuilds every shard a held node is in): the free NVLink set
    // sizes it holds (heldSetSizes) and its pod-group facts (nodeGroupFacts).
    std::uint8_t heldSets = 0;
    NodeGroupFacts groupFacts;
    DraNodeStateConstSharedPtr dra;  // the node's DRA state, kept until its inputs change
    bool draStale = true;
  };

  using EntryMap = std::unordered_map<std::string, Entry, NodeNameHash, std::equal_to<>>;
  static constexpr std::size_t kShards = NodeStateIndex::kShardCount;

  void touch(std::size_t shard, Entry& entry);
  const NodeState& readEntry(Entry& entry);
  // The shard's map for the next snapshot (null when the shard has no nodes); its health totals
  // go to shardHealth_.
  NodeStateIndex::ShardConstSharedPtr buildShard(std::size_t shard);

  PolicyConstSharedPtr policy_;
  std::string poolLabel_;
  GroupDomainInterner domains_;
  GroupPlanTableConstSharedPtr groupPlans_;
  GroupMemberTableConstSharedPtr groupMembers_;
  bool synced_ = false;
  bool metaChanged_ = true;  // policy or synced flag changed since the last build
  std::uint64_t nextGeneration_ = 1;
  std::uint64_t builtGeneration_ = 0;      // every stamp <= this is reflected in current_
  std::array<EntryMap, kShards> entries_;  // by NodeStateIndex::shardOf(name)
  std::bitset<kShards> dirty_;             // shards with a node stamped or removed since the build
  std::array<PoolHealthList, kShards> shardHealth_;  // each shard's pool totals, as last built
  std::array<ScarceSets, kShards> shardScarceSets_;  // each shard's set holders, as last built
  std::size_t nodeCount_ = 0;
  std::size_t pendingRemovals_ = 0;
  std::uint64_t snapshotGeneration_ = 0;
  const dra::SliceIndex* draSlices_ = nullptr;
  const dra::AllocatedDevices* draAllocated_ = nullptr;
  dra::DraObjectsConstSharedPtr draObjects_;
  ClusterSnapshotConstSharedPtr current_;
  SnapshotBuildStats stats_;
};

}  // namespace gte
