#include "snapshot/cluster_snapshot_builder.h"

#include <utility>

namespace gte {
namespace {

// The parts of a NodeInfo a NodeState depends on.
bool sameInputs(const NodeInfo& a, const NodeInfo& b) {
  return a.labels == b.labels && a.allocatable == b.allocatable &&
         a.unschedulable == b.unschedulable;
}

}  // namespace

ClusterSnapshotBuilder::ClusterSnapshotBuilder(PolicyConstSharedPtr policy)
    : policy_(std::move(policy)) {}

void ClusterSnapshotBuilder::touch(Entry& entry, bool labelsChanged) {
  entry.generation = nextGeneration_++;
  entry.labelsChanged = entry.labelsChanged || labelsChanged;
  ++changes_;
}

void ClusterSnapshotBuilder::upsertNode(NodeInfo node, NodeUsage usage) {
  const auto it = entries_.find(node.name);
  if (it == entries_.end()) {
    std::string name = node.name;
    Entry& entry = entries_[name];
    entry.node = std::move(node);
    entry.usage = std::move(usage);
    touch(entry, true);
    return;
  }
  Entry& entry = it->second;
  const bool labelsChanged = !sameInputs(entry.node, node);
  const bool changed = labelsChanged || !(entry.usage == usage);
  entry.node = std::move(node);  // keeps uid/resourceVersion current even when nothing changed
  entry.usage = std::move(usage);
  if (changed) {
    touch(entry, labelsChanged);
  }
}

bool ClusterSnapshotBuilder::setUsage(std::string_view name, NodeUsage usage) {
  const auto it = entries_.find(name);
  if (it == entries_.end()) {
    return false;
  }
  if (!(it->second.usage == usage)) {
    it->second.usage = std::move(usage);
    touch(it->second, false);
  }
  return true;
}

void ClusterSnapshotBuilder::removeNode(std::string_view name) {
  const auto it = entries_.find(name);
  if (it != entries_.end()) {
    entries_.erase(it);
    ++pendingRemovals_;
  }
}

void ClusterSnapshotBuilder::setPolicy(PolicyConstSharedPtr policy) {
  if (policy_ && policy && *policy_ == *policy) {
    return;
  }
  policy_ = std::move(policy);
  metaChanged_ = true;
  for (auto& [name, entry] : entries_) {
    touch(entry, true);  // link scores, prefix and MIG tables change every derived fact
  }
}

void ClusterSnapshotBuilder::setSynced(bool synced) {
  if (synced_ != synced) {
    synced_ = synced;
    metaChanged_ = true;
  }
}

ClusterSnapshotConstSharedPtr ClusterSnapshotBuilder::build() {
  stats_ = {};
  if (current_ && changes_ == 0 && pendingRemovals_ == 0 && !metaChanged_) {
    stats_.shared = current_->nodes.size();
    return current_;
  }
  auto next = std::make_shared<ClusterSnapshot>();
  next->generation = ++snapshotGeneration_;
  next->policy = policy_;
  next->synced = synced_;
  next->nodes.reserve(entries_.size());
  for (auto& [name, entry] : entries_) {
    if (entry.generation > builtGeneration_ || !entry.state) {
      const NodeState* sameLabels = entry.labelsChanged ? nullptr : entry.state.get();
      entry.state = buildNodeState(entry.node, entry.usage, *policy_, sameLabels);
      entry.labelsChanged = false;
      ++stats_.rebuilt;
    } else {
      ++stats_.shared;
    }
    next->nodes.emplace(name, entry.state);
  }
  stats_.removed = pendingRemovals_;
  builtGeneration_ = nextGeneration_ - 1;
  changes_ = 0;
  pendingRemovals_ = 0;
  metaChanged_ = false;
  current_ = std::move(next);
  return current_;
}

}  // namespace gte
