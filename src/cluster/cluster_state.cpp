#include "cluster/cluster_state.h"

#include <algorithm>

#include "cluster/gpu_annotation.h"
#include "model/gpu_request.h"
#include "snapshot/node_state.h"
#include "snapshot/pod_demand.h"
#include "snapshot/predict_allocation.h"
#include "topology/topology_labels.h"

namespace gte::cluster {
namespace {

std::string podName(const PodInfo& pod) {
  return pod.ns + "/" + pod.name;
}

// The cache is keyed by UID; a pod without one (hand-written input) is keyed by its name.
std::string podKey(const PodInfo& pod) {
  return pod.uid.empty() ? podName(pod) : pod.uid;
}

// labels-v1 `gen` of a node whose labels read cleanly; 0 otherwise (no labels-v1, malformed):
// then nothing the labels say covers any pod.
std::int64_t labelsGenerationOf(const NodeInfo& node, const Policy& policy) {
  Result<GpuTopology> topology = readTopology(node, policy);
  if (!topology || topology->source != TopologySource::kLabelsV1) return 0;
  return topology->generation;
}

// A bound pod's GPUs counted by number when no placement can be named: a topology annotation the
// policy rejects (the pod still holds its GPUs) or no room left in the prediction.
std::int64_t wholeGpusRequested(const PodInfo& pod) {
  Result<GpuRequest> request = gpuRequestFrom(pod.requests);
  return request ? request->gpus : 0;
}

// Marks the allocation's GPUs and MIG instances free in a copy of the node's labels-v1 strings
// (`used`: '1' -> '0'; `mig<i>` tokens <p><s>u -> <p><s>f).
void freeInLabels(NodeInfo& node, const Allocation& allocation, const Policy& policy) {
  if (auto used = node.labels.find(policy.labelPrefix + "used"); used != node.labels.end()) {
    for (const int gpu : allocation.gpus) {
      const auto at = static_cast<std::size_t>(gpu);
      if (gpu >= 0 && at < used->second.size() && used->second[at] == '1') used->second[at] = '0';
    }
  }
  for (const MigAssignment& instance : allocation.mig) {
    const auto tokens = node.labels.find(policy.labelPrefix + "mig" + std::to_string(instance.gpu));
    if (tokens == node.labels.end() || instance.start < 0 || instance.start > 9) continue;
    std::string& value = tokens->second;
    for (std::size_t at = 0; at + 2 < value.size(); at += 3) {
      if (value[at + 1] == static_cast<char>('0' + instance.start) && value[at + 2] == 'u') {
        value[at + 2] = 'f';
      }
    }
  }
}

}  // namespace

bool labelsCoverPod(std::int64_t labelsGeneration, std::int64_t boundAt,
                    std::int64_t clockSkewSeconds) noexcept {
  // Strictly after: a write in the same second as the bind cannot have seen the pod's containers.
  return labelsGeneration > 0 && labelsGeneration > boundAt + clockSkewSeconds;
}

ClusterState::ClusterState(PolicyConstSharedPtr policy, ClusterStateOptions options)
    : options_(std::move(options)), policy_(policy), builder_(std::move(policy)) {
  std::lock_guard lock(mutex_);
  publishLocked();
}

ClusterSnapshotConstSharedPtr ClusterState::snapshot() const {
  std::lock_guard lock(snapshotMutex_);
  return current_;
}

std::int64_t ClusterState::nowSeconds() const {
  return std::chrono::duration_cast<std::chrono::seconds>(options_.now().time_since_epoch())
      .count();
}

PodInfo ClusterState::trimmed(PodInfo pod) const {
  // Only the extender's own annotations matter; others (kubectl's last-applied-configuration can be
  // kilobytes) would dominate the cache's memory.
  std::erase_if(pod.annotations, [this](const auto& entry) {
    return entry.first.rfind(policy_->labelPrefix, 0) != 0;
  });
  return pod;
}

// ---------------------------------------------------------------- nodes

void ClusterState::setNodeLocked(NodeInfo node, NameSet& dirty) {
  const std::int64_t generation = labelsGenerationOf(node, *policy_);
  std::string name = node.name;
  NodeInfo copy = node;
  nodes_[name] = NodeRecord{std::move(node), generation};
  // With its current usage, so a node whose labels did not change is not re-derived.
  builder_.upsertNode(std::move(copy), usageLocked(name));
  dirty.insert(std::move(name));
}

void ClusterState::replaceNodes(std::vector<NodeInfo> nodes) {
  std::lock_guard lock(mutex_);
  NameSet dirty;
  NameSet listed;
  for (NodeInfo& node : nodes) {
    listed.insert(node.name);
    setNodeLocked(std::move(node), dirty);
  }
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    if (listed.count(it->first) == 0) {
      dirty.insert(it->first);
      it = nodes_.erase(it);
    } else {
      ++it;
    }
  }
  refreshLocked(dirty);
}

void ClusterState::upsertNode(NodeInfo node) {
  std::lock_guard lock(mutex_);
  NameSet dirty;
  setNodeLocked(std::move(node), dirty);
  refreshLocked(dirty);
}

void ClusterState::removeNode(std::string_view name) {
  std::lock_guard lock(mutex_);
  NameSet dirty{std::string(name)};
  nodes_.erase(std::string(name));
  refreshLocked(dirty);
}

// ---------------------------------------------------------------- pods

void ClusterState::upsertPodLocked(ObservedPod observed, NameSet& dirty) {
  const std::string uid = podKey(observed.pod);
  if (observed.pod.terminal()) {
    // Succeeded/Failed pods hold no devices any more.
    erasePodLocked(uid, dirty);
    eraseReservationLocked(uid, dirty);
    return;
  }
  if (observed.pod.nodeName.empty() && observed.pod.nominatedNodeName.empty()) {
    // Pending and not nominated: nothing to account or preempt. A reservation made for it by a
    // bind in flight stays until the bind finishes.
    erasePodLocked(uid, dirty);
    return;
  }
  PodRecord record;
  record.pod = trimmed(std::move(observed.pod));
  const std::string& node = record.pod.nodeName;
  const auto existing = pods_.find(uid);
  if (!node.empty()) {
    if (existing != pods_.end() && existing->second.pod.nodeName == node) {
      // Same binding: keep what was decided when it was first seen.
      record.boundAt = existing->second.boundAt;
      record.allocation = existing->second.allocation;
      record.unplacedGpus = existing->second.unplacedGpus;
    } else {
      record.boundAt = observed.boundAt.value_or(nowSeconds());
      const auto reservation = reservations_.find(uid);
      if (reservation != reservations_.end() && reservation->second.node == node) {
        // Our own bind: the GPUs reserved are the ones to count, from the reservation on.
        record.allocation = reservation->second.allocation;
        record.boundAt = std::max(record.boundAt, reservation->second.reservedAt);
      }
    }
    const auto annotation =
        record.pod.annotations.find(policy_->labelPrefix + std::string(kGpusAnnotation));
    if (annotation != record.pod.annotations.end()) {
      if (auto recorded = parseGpuAnnotation(annotation->second); recorded) {
        record.allocation = std::move(*recorded);
        record.unplacedGpus = 0;
      }
    }
    eraseReservationLocked(uid, dirty);
  }
  if (existing != pods_.end() && existing->second.pod.nodeName != node &&
      !existing->second.pod.nodeName.empty()) {
    const std::string& previous = existing->second.pod.nodeName;
    podsByNode_[previous].erase(uid);
    dirty.insert(previous);
  }
  if (!node.empty()) {
    podsByNode_[node].insert(uid);
    dirty.insert(node);
  }
  pods_[uid] = std::move(record);
}

void ClusterState::erasePodLocked(const std::string& uid, NameSet& dirty) {
  const auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  const std::string& node = it->second.pod.nodeName;
  if (!node.empty()) {
    const auto onNode = podsByNode_.find(node);
    if (onNode != podsByNode_.end()) {
      onNode->second.erase(uid);
      if (onNode->second.empty()) podsByNode_.erase(onNode);
    }
    dirty.insert(node);
  }
  pods_.erase(it);
}

void ClusterState::eraseReservationLocked(const std::string& uid, NameSet& dirty) {
  const auto it = reservations_.find(uid);
  if (it == reservations_.end()) return;
  dirty.insert(it->second.node);
  reservations_.erase(it);
}

void ClusterState::replacePods(std::vector<ObservedPod> pods) {
  std::lock_guard lock(mutex_);
  NameSet dirty;
  NameSet listed;
  for (ObservedPod& observed : pods) {
    listed.insert(podKey(observed.pod));
    upsertPodLocked(std::move(observed), dirty);
  }
  std::vector<std::string> gone;
  for (const auto& [uid, record] : pods_) {
    if (listed.count(uid) == 0) gone.push_back(uid);
  }
  for (const std::string& uid : gone)
    erasePodLocked(uid, dirty);
  refreshLocked(dirty);
}

void ClusterState::upsertPod(ObservedPod pod) {
  std::lock_guard lock(mutex_);
  NameSet dirty;
  upsertPodLocked(std::move(pod), dirty);
  refreshLocked(dirty);
}

void ClusterState::removePod(std::string_view uid) {
  std::lock_guard lock(mutex_);
  NameSet dirty;
  erasePodLocked(std::string(uid), dirty);
  eraseReservationLocked(std::string(uid), dirty);
  refreshLocked(dirty);
}

void ClusterState::setSynced(bool synced) {
  std::lock_guard lock(mutex_);
  builder_.setSynced(synced);
  publishLocked();
}

void ClusterState::setPolicy(PolicyConstSharedPtr policy) {
  std::lock_guard lock(mutex_);
  policy_ = policy;
  builder_.setPolicy(std::move(policy));
  NameSet dirty;
  for (auto& [name, record] : nodes_) {
    record.labelsGeneration = labelsGenerationOf(record.info, *policy_);
    dirty.insert(name);
  }
  refreshLocked(dirty);
}

// ---------------------------------------------------------------- bind

Result<Allocation> ClusterState::reserve(const PodInfo& pod, const std::string& node) {
  std::lock_guard lock(mutex_);
  NameSet dirty;
  expireLocked(dirty);
  const std::string uid = podKey(pod);
  // Publish whatever expiry freed, whichever way this returns.
  struct RefreshOnExit {
    ClusterState& state;
    NameSet& dirty;
    ~RefreshOnExit() { state.refreshLocked(dirty); }
  } refreshOnExit{*this, dirty};

  if (const auto bound = pods_.find(uid);
      bound != pods_.end() && !bound->second.pod.nodeName.empty()) {
    if (bound->second.pod.nodeName != node) {
      return Error{
          ErrorCode::kFailedPrecondition,
          "pod " + podName(pod) + " is already bound to node " + bound->second.pod.nodeName};
    }
    return bound->second.allocation.value_or(Allocation{true, {}, {}});
  }
  if (const auto held = reservations_.find(uid); held != reservations_.end()) {
    if (held->second.node == node) return held->second.allocation;
    eraseReservationLocked(uid, dirty);  // a retry of the bind on another node
  }
  const auto nodeRecord = nodes_.find(node);
  if (nodeRecord == nodes_.end()) {
    return Error{ErrorCode::kNotFound, "node " + node + " is not in the cache"};
  }
  Result<PodDemand> demand = parsePodDemand(pod, *policy_);
  if (!demand) return std::move(demand).error();
  // The published snapshot is current for every node (each change publishes), except for what
  // this call itself freed above.
  refreshLocked(dirty);
  dirty.clear();
  const ClusterSnapshotConstSharedPtr now = snapshot();
  const NodeState* state = now->find(node);
  if (state == nullptr) {
    return Error{ErrorCode::kInternal, "node " + node + " has no state in the snapshot"};
  }
  Allocation allocation =
      demand->empty() ? Allocation{true, {}, {}} : predictAllocation(*demand, *state);
  if (!allocation.complete) {
    return Error{ErrorCode::kFailedPrecondition,
                 "node " + node + " has no room left for pod " + podName(pod) +
                     " (the GPUs it fitted are taken by pods placed since)"};
  }
  Reservation reservation{trimmed(pod), node, allocation, nowSeconds(),
                          options_.now() + options_.reservationTtl};
  reservations_[uid] = std::move(reservation);
  dirty.insert(node);
  return allocation;
}

void ClusterState::release(std::string_view uid) {
  std::lock_guard lock(mutex_);
  NameSet dirty;
  eraseReservationLocked(std::string(uid), dirty);
  refreshLocked(dirty);
}

void ClusterState::markBound(std::string_view uid) {
  std::lock_guard lock(mutex_);
  const auto it = reservations_.find(std::string(uid));
  if (it == reservations_.end()) return;
  Reservation reservation = std::move(it->second);
  reservations_.erase(it);
  PodRecord record;
  record.pod = std::move(reservation.pod);
  record.pod.nodeName = reservation.node;
  record.boundAt = reservation.reservedAt;
  record.allocation = std::move(reservation.allocation);
  const std::string key(uid);
  podsByNode_[reservation.node].insert(key);
  pods_[key] = std::move(record);
  refreshLocked(NameSet{reservation.node});
}

std::size_t ClusterState::expireLocked(NameSet& dirty) {
  const auto now = options_.now();
  std::size_t expired = 0;
  for (auto it = reservations_.begin(); it != reservations_.end();) {
    if (it->second.expires <= now) {
      dirty.insert(it->second.node);
      it = reservations_.erase(it);
      ++expired;
    } else {
      ++it;
    }
  }
  return expired;
}

std::size_t ClusterState::expireReservations() {
  std::lock_guard lock(mutex_);
  NameSet dirty;
  const std::size_t expired = expireLocked(dirty);
  refreshLocked(dirty);
  return expired;
}

// ---------------------------------------------------------------- accounting

bool ClusterState::counted(const PodRecord& record, const NodeRecord& node) const {
  return !labelsCoverPod(node.labelsGeneration, record.boundAt, options_.labelClockSkewSeconds);
}

NodeUsage ClusterState::usageLocked(const std::string& name) {
  NodeUsage usage;
  const auto node = nodes_.find(name);
  if (node == nodes_.end()) return usage;
  std::vector<PodRecord*> unpredicted;
  if (const auto onNode = podsByNode_.find(name); onNode != podsByNode_.end()) {
    for (const std::string& uid : onNode->second) {
      PodRecord& record = pods_.at(uid);
      if (!counted(record, node->second)) continue;
      if (record.allocation) {
        addToUsage(usage, *record.allocation);
        usage.unknownGpus += record.unplacedGpus;
      } else {
        unpredicted.push_back(&record);
      }
    }
  }
  for (const auto& [uid, reservation] : reservations_) {
    if (reservation.node == name) addToUsage(usage, reservation.allocation);
  }
  // Pods first counted now get the device plugin's predicted pick, in bind order, each against
  // the node as the ones before it left it.
  std::sort(unpredicted.begin(), unpredicted.end(), [](const PodRecord* a, const PodRecord* b) {
    return a->boundAt != b->boundAt ? a->boundAt < b->boundAt : a->pod.uid < b->pod.uid;
  });
  for (PodRecord* record : unpredicted) {
    Result<PodDemand> demand = parsePodDemand(record->pod, *policy_);
    Allocation allocation{true, {}, {}};
    if (!demand) {
      record->unplacedGpus = wholeGpusRequested(record->pod);
    } else if (!demand->empty()) {
      const NodeStateConstSharedPtr state = buildNodeState(node->second.info, usage, *policy_);
      allocation = predictAllocation(*demand, *state);
      if (!allocation.complete) {
        // The labels or earlier pods say there is no room; the pod runs anyway, so count it.
        allocation = Allocation{false, {}, {}};
        record->unplacedGpus = demand->gpus;
      }
    }
    record->allocation = std::move(allocation);
    addToUsage(usage, *record->allocation);
    usage.unknownGpus += record->unplacedGpus;
  }
  return usage;
}

void ClusterState::refreshLocked(const NameSet& dirty) {
  for (const std::string& name : dirty) {
    if (nodes_.count(name) == 0) {
      builder_.removeNode(name);
      continue;
    }
    builder_.setUsage(name, usageLocked(name));
  }
  publishLocked();
}

void ClusterState::publishLocked() {
  ClusterSnapshotConstSharedPtr next = builder_.build();
  std::lock_guard lock(snapshotMutex_);
  current_ = std::move(next);
}

// ---------------------------------------------------------------- queries

std::optional<PodInfo> ClusterState::podByUid(std::string_view uid) const {
  std::lock_guard lock(mutex_);
  const std::string key(uid);
  if (const auto it = pods_.find(key); it != pods_.end()) return it->second.pod;
  if (const auto it = reservations_.find(key); it != reservations_.end()) {
    PodInfo pod = it->second.pod;
    pod.nodeName = it->second.node;
    return pod;
  }
  return std::nullopt;
}

std::vector<PodInfo> ClusterState::podsOnNode(std::string_view node) const {
  std::lock_guard lock(mutex_);
  std::vector<PodInfo> out;
  if (const auto onNode = podsByNode_.find(std::string(node)); onNode != podsByNode_.end()) {
    for (const std::string& uid : onNode->second)
      out.push_back(pods_.at(uid).pod);
  }
  for (const auto& [uid, reservation] : reservations_) {
    if (reservation.node != node) continue;
    out.push_back(reservation.pod);
    out.back().nodeName = reservation.node;
  }
  return out;
}

NodeStateConstSharedPtr ClusterState::nodeStateWithout(
    std::string_view name, const std::vector<std::string>& podUids) const {
  std::lock_guard lock(mutex_);
  const auto node = nodes_.find(std::string(name));
  if (node == nodes_.end()) return nullptr;
  const std::unordered_set<std::string> victims(podUids.begin(), podUids.end());
  NodeInfo info = node->second.info;
  NodeUsage usage;
  if (const auto onNode = podsByNode_.find(node->first); onNode != podsByNode_.end()) {
    for (const std::string& uid : onNode->second) {
      const PodRecord& record = pods_.at(uid);
      const bool isCounted = counted(record, node->second);
      if (victims.count(uid) != 0) {
        if (!isCounted && record.allocation) freeInLabels(info, *record.allocation, *policy_);
        continue;
      }
      if (!isCounted) continue;
      // Every counted pod has an allocation after the last refresh.
      if (record.allocation) addToUsage(usage, *record.allocation);
      usage.unknownGpus += record.unplacedGpus;
    }
  }
  for (const auto& [uid, reservation] : reservations_) {
    if (reservation.node == node->first && victims.count(uid) == 0) {
      addToUsage(usage, reservation.allocation);
    }
  }
  return buildNodeState(info, usage, *policy_);
}

std::size_t ClusterState::nodeCount() const {
  std::lock_guard lock(mutex_);
  return nodes_.size();
}

std::size_t ClusterState::podCount() const {
  std::lock_guard lock(mutex_);
  return pods_.size();
}

std::size_t ClusterState::reservationCount() const {
  std::lock_guard lock(mutex_);
  return reservations_.size();
}

}  // namespace gte::cluster
