#include "snapshot/cluster_snapshot_builder.h"

#include <atomic>
#include <utility>

#include "core/node_content.h"
#include "core/plain_answers.h"
#include "dra_placement/dra_node_state.h"

namespace gte {
namespace {

bool sameCharges(const NodeChargesConstSharedPtr& a, const NodeChargesConstSharedPtr& b) {
  if (a == b) return true;
  const bool aEmpty = !a || a->empty();
  const bool bEmpty = !b || b->empty();
  if (aEmpty || bEmpty) return aEmpty && bEmpty;
  return *a == *b;
}

}  // namespace

ClusterSnapshotBuilder::ClusterSnapshotBuilder(PolicyConstSharedPtr policy, std::string poolLabel)
    : policy_(std::move(policy)),
      poolLabel_(std::move(poolLabel)),
      groupPlans_(std::make_shared<const GroupPlanTable>()),
      groupMembers_(std::make_shared<const GroupMemberTable>()) {
  if (policy_) domains_.setLevels(policy_->groups.levels);
}

void ClusterSnapshotBuilder::touch(std::size_t shard, Entry& entry) {
  entry.generation = nextGeneration_++;
  dirty_.set(shard);
}

bool ClusterSnapshotBuilder::upsertNode(NodeInfo node, NodeChargesConstSharedPtr charges) {
  const std::size_t shard = NodeStateIndex::shardOf(node.name);
  EntryMap& entries = entries_[shard];
  const auto it = entries.find(node.name);
  if (it == entries.end()) {
    std::string name = node.name;
    Entry& entry = entries[name];
    entry.node = std::move(node);
    entry.charges = std::move(charges);
    ++nodeCount_;
    touch(shard, entry);
    return true;
  }
  Entry& entry = it->second;
  const bool labelsChanged = !sameNodeContent(entry.node, node);
  if (labelsChanged) {
    // The state read from the previous content no longer describes this node; the next read
    // starts over (and the DRA mapping, which reads its topology).
    entry.read = NodeReadKey{};
    entry.draStale = true;
  }
  const bool changed = labelsChanged || !sameCharges(entry.charges, charges);
  entry.node = std::move(node);  // keeps uid/resourceVersion current even when nothing changed
  entry.charges = std::move(charges);
  if (changed) {
    touch(shard, entry);
  }
  return labelsChanged;
}

bool ClusterSnapshotBuilder::setCharges(std::string_view name, NodeChargesConstSharedPtr charges) {
  const std::size_t shard = NodeStateIndex::shardOf(name);
  const auto it = entries_[shard].find(name);
  if (it == entries_[shard].end()) {
    return false;
  }
  if (!sameCharges(it->second.charges, charges)) {
    it->second.charges = std::move(charges);
    touch(shard, it->second);
  }
  return true;
}

const NodeState& ClusterSnapshotBuilder::readEntry(Entry& entry) {
  if (!entry.state || !entry.read.current(policy_)) {
    entry.state = readNodeState(entry.node, *policy_);
    entry.read = NodeReadKey{policy_};
    entry.domains = domains_.idsOf(entry.node.labels);
  }
  return *entry.state;
}

const NodeState* ClusterSnapshotBuilder::read(std::string_view name) {
  const std::size_t shard = NodeStateIndex::shardOf(name);
  const auto it = entries_[shard].find(name);
  return it == entries_[shard].end() ? nullptr : &readEntry(it->second);
}

DraNodeStateConstSharedPtr ClusterSnapshotBuilder::draState(std::string_view name) const {
  const std::size_t shard = NodeStateIndex::shardOf(name);
  const auto it = entries_[shard].find(name);
  return it == entries_[shard].end() ? nullptr : it->second.dra;
}

GroupDomainIds ClusterSnapshotBuilder::groupDomains(std::string_view name) {
  const std::size_t shard = NodeStateIndex::shardOf(name);
  const auto it = entries_[shard].find(name);
  if (it == entries_[shard].end())
    return GroupDomainIds{kNoDomain, kNoDomain, kNoDomain, kNoDomain};
  readEntry(it->second);
  return it->second.domains;
}

std::vector<std::string> ClusterSnapshotBuilder::names() const {
  std::vector<std::string> out;
  out.reserve(nodeCount_);
  for (const EntryMap& entries : entries_) {
    for (const auto& [name, entry] : entries)
      out.push_back(name);
  }
  return out;
}

void ClusterSnapshotBuilder::removeNode(std::string_view name) {
  const std::size_t shard = NodeStateIndex::shardOf(name);
  const auto it = entries_[shard].find(name);
  if (it != entries_[shard].end()) {
    entries_[shard].erase(it);
    --nodeCount_;
    ++pendingRemovals_;
    dirty_.set(shard);
  }
}

void ClusterSnapshotBuilder::setPolicy(PolicyConstSharedPtr policy) {
  if (policy_ && policy && *policy_ == *policy) {
    return;
  }
  policy_ = std::move(policy);
  domains_.setLevels(policy_->groups.levels);
  metaChanged_ = true;
  for (std::size_t shard = 0; shard < kShards; ++shard) {
    for (auto& [name, entry] : entries_[shard]) {
      touch(shard, entry);  // link scores, prefix and MIG tables change every derived fact
    }
  }
}

void ClusterSnapshotBuilder::setGroupPlans(GroupPlanTableConstSharedPtr plans) {
  if (!plans) plans = std::make_shared<const GroupPlanTable>();
  if (plans == groupPlans_ || (plans->empty() && groupPlans_->empty())) return;
  groupPlans_ = std::move(plans);
  metaChanged_ = true;
}

void ClusterSnapshotBuilder::setGroupMembers(GroupMemberTableConstSharedPtr members) {
  if (!members) members = std::make_shared<const GroupMemberTable>();
  if (members == groupMembers_ || (members->empty() && groupMembers_->empty())) return;
  groupMembers_ = std::move(members);
  metaChanged_ = true;
}

void ClusterSnapshotBuilder::setDra(const dra::SliceIndex* slices,
                                    const dra::AllocatedDevices* allocated,
                                    dra::DraObjectsConstSharedPtr objects) {
  const bool on = slices != nullptr && allocated != nullptr && objects != nullptr;
  draSlices_ = on ? slices : nullptr;
  draAllocated_ = on ? allocated : nullptr;
  draObjects_ = on ? std::move(objects) : nullptr;
  metaChanged_ = true;
  draAllNodesChanged();
}

void ClusterSnapshotBuilder::setDraObjects(dra::DraObjectsConstSharedPtr objects) {
  if (draSlices_ == nullptr || !objects) return;
  const bool newClasses = draObjects_->classes() != objects->classes();
  draObjects_ = std::move(objects);
  metaChanged_ = true;
  if (newClasses) draAllNodesChanged();
}

bool ClusterSnapshotBuilder::draNodeChanged(std::string_view name) {
  const std::size_t shard = NodeStateIndex::shardOf(name);
  const auto it = entries_[shard].find(name);
  if (it == entries_[shard].end()) {
    return false;
  }
  it->second.draStale = true;
  touch(shard, it->second);
  return true;
}

void ClusterSnapshotBuilder::draAllNodesChanged() {
  for (std::size_t shard = 0; shard < kShards; ++shard) {
    for (auto& [name, entry] : entries_[shard]) {
      entry.draStale = true;
      touch(shard, entry);
    }
  }
}

void ClusterSnapshotBuilder::setSynced(bool synced) {
  if (synced_ != synced) {
    synced_ = synced;
    metaChanged_ = true;
  }
}

NodeStateIndex::ShardConstSharedPtr ClusterSnapshotBuilder::buildShard(std::size_t shard) {
  EntryMap& entries = entries_[shard];
  PoolHealthList& health = shardHealth_[shard];
  health.clear();
  ScarceSets& scarce = shardScarceSets_[shard];
  scarce = {};
  if (entries.empty()) {
    return nullptr;
  }
  std::vector<NodeStateShard::Entry> states;
  std::vector<PlainAnswers> plain;
  std::vector<NodeGroupFacts> groupFacts;
  states.reserve(entries.size());
  plain.reserve(entries.size());
  groupFacts.reserve(entries.size());
  for (auto& [name, entry] : entries) {
    if (entry.generation > builtGeneration_ || !entry.state) {
      // Labels are read once per change; a change of charges re-derives from the state already
      // read. `read` keeps that state alive while the new one is built from it.
      readEntry(entry);
      const NodeStateConstSharedPtr read = entry.state;
      if (entry.draStale) {
        entry.dra = draSlices_ == nullptr
                        ? nullptr
                        : buildDraNodeState(entry.node, read->topology, *draSlices_, *draAllocated_,
                                            draObjects_->classes());
        entry.draStale = false;
      }
      entry.state = chargeNodeState(*read, entry.charges, *policy_, entry.dra);
      entry.plain = precomputePlainAnswers(*entry.state, *policy_);
      entry.health = nodeHealth(*entry.state);
      entry.pool = poolOf(entry.node, *entry.state, poolLabel_);
      entry.heldSets = heldSetSizes(*entry.state);
      entry.groupFacts = nodeGroupFacts(*entry.state, entry.domains, *policy_);
      ++stats_.rebuilt;
    } else {
      ++stats_.shared;
    }
    addToPool(health, entry.pool, entry.health);
    scarce.addHeld(entry.heldSets);
    states.emplace_back(name, entry.state);
    plain.push_back(entry.plain);
    groupFacts.push_back(entry.groupFacts);
  }
  return std::make_shared<const NodeStateShard>(std::move(states), std::move(plain),
                                                std::move(groupFacts));
}

namespace {

// Process-wide, so that snapshots of two builders never share a value.
std::uint64_t newNodesGeneration() {
  static std::atomic<std::uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

ClusterSnapshotConstSharedPtr ClusterSnapshotBuilder::build() {
  stats_ = {};
  if (current_ && dirty_.none() && !metaChanged_) {
    stats_.shared = current_->nodes.size();
    return current_;
  }
  auto next = std::make_shared<ClusterSnapshot>();
  next->generation = ++snapshotGeneration_;
  next->nodesGeneration =
      current_ && dirty_.none() ? current_->nodesGeneration : newNodesGeneration();
  next->policy = policy_;
  next->synced = synced_;
  next->groupPlans = groupPlans_;
  next->groupMembers = groupMembers_;
  next->dra = draObjects_;
  for (std::size_t shard = 0; shard < kShards; ++shard) {
    if (!current_ || dirty_.test(shard)) {
      next->nodes.setShard(shard, buildShard(shard));
    } else {
      const auto& previous = current_->nodes.shard(shard);
      stats_.shared += previous ? previous->size() : 0;
      next->nodes.setShard(shard, previous);
    }
  }
  // After the shards: reading changed nodes' labels may have named new domains.
  next->groupDomains = domains_.names();
  next->health = mergeHealth(shardHealth_);
  for (const ScarceSets& shard : shardScarceSets_)
    next->scarceSets.add(shard);
  stats_.removed = pendingRemovals_;
  builtGeneration_ = nextGeneration_ - 1;
  dirty_.reset();
  pendingRemovals_ = 0;
  metaChanged_ = false;
  current_ = std::move(next);
  return current_;
}

}  // namespace gte
