#include "cluster/cluster_state.h"

#include <algorithm>
#include <set>
#include <utility>

#include "cluster/gpu_annotation.h"
#include "core/compiled_pod.h"
#include "core/node_charges.h"
#include "core/node_decider.h"
#include "core/node_state.h"
#include "core/pod_demand.h"
#include "core/predict_allocation.h"
#include "group/pod_group.h"
#include "model/gpu_request.h"

namespace gte::cluster {
namespace {

std::string podName(const PodInfo& pod) {
  return pod.ns + "/" + pod.name;
}

// The cache is keyed by UID; a pod without one (hand-written input) is keyed by its name.
std::string podKey(const PodInfo& pod) {
  return pod.uid.empty() ? podName(pod) : pod.uid;
}

bool isGpuResource(std::string_view name) {
  return name == kGpuResource || name == kSharedGpuResource || name.starts_with(kMigResourcePrefix);
}

// A bound pod's GPUs counted by number when no placement can be named: a topology annotation the
// policy rejects (the pod still holds its GPUs) or no room left in the prediction.
std::int64_t wholeGpusRequested(const PodInfo& pod) {
  Result<GpuRequest> request = gpuRequestFrom(pod.requests);
  return request ? request->gpus : 0;
}

// The group book's observer, forwarding to `events` (null: nothing is reported).
GroupBookObserver groupObserver(ClusterEvents* events) {
  GroupBookObserver out;
  if (events == nullptr) return out;
  out.released = [events](HoldRelease reason, std::size_t n) { events->holdsReleased(reason, n); };
  out.placed = [events](std::string_view level, bool whole) { events->groupPlaced(level, whole); };
  out.firstToLast = [events](double seconds) { events->groupFirstToLast(seconds); };
  return out;
}

}  // namespace

bool holdsDevices(const PodInfo& pod) {
  if (!pod.resourceClaims.empty()) return true;  // its claims may hold GPUs (docs/dra.md)
  Result<GpuRequest> request = gpuRequestFrom(pod.requests);
  return !request || !request->empty();
}

bool labelsCoverPod(std::int64_t labelsGeneration, std::int64_t boundAt,
                    std::int64_t clockSkewSeconds) noexcept {
  // Strictly after: a write in the same second as the bind cannot have seen the pod's containers.
  return labelsGeneration > 0 && labelsGeneration > boundAt + clockSkewSeconds;
}

ClusterState::ClusterState(PolicyConstSharedPtr policy, ClusterStateOptions options)
    : options_(std::move(options)),
      policy_(policy),
      builder_(std::move(policy), options_.healthPoolLabel),
      groups_(groupObserver(options_.events.get())) {
  MutexLock lock(mutex_);
  publishLocked();
}

ClusterSnapshotConstSharedPtr ClusterState::snapshot() const {
  MutexLock lock(snapshotMutex_);
  return current_;
}

std::int64_t ClusterState::nowSeconds() const {
  return std::chrono::duration_cast<std::chrono::seconds>(options_.now().time_since_epoch())
      .count();
}

PodInfo ClusterState::compact(PodInfo pod) const {
  MutexLock lock(mutex_);
  return trimmedLocked(std::move(pod));
}

PodInfo ClusterState::trimmedLocked(PodInfo pod) const {
  // Only the extender's own annotations, the keys naming a pod group and its size, and the device
  // requests matter; the rest (kubectl's last-applied-configuration can be kilobytes) would
  // dominate the cache's memory.
  const std::string& prefix = policy_->labelPrefix;
  std::erase_if(pod.annotations, [&prefix](const auto& entry) {
    return entry.first.rfind(prefix, 0) != 0 && !isGroupAnnotation(entry.first);
  });
  std::erase_if(pod.labels, [](const auto& entry) { return !isGroupLabel(entry.first); });
  ResourceList devices;
  for (const auto& [name, quantity] : pod.requests.entries()) {
    if (isGpuResource(name)) devices.set(name, quantity);
  }
  pod.requests = std::move(devices);
  pod.resourceVersion.clear();
  pod.resourceVersion.shrink_to_fit();
  return pod;
}

std::int64_t ClusterState::labelsGenerationLocked(const std::string& node) {
  const NodeState* read = builder_.read(node);
  return read != nullptr && read->status == TopologyStatus::kKnown ? read->topology.generation : 0;
}

bool ClusterState::countedLocked(std::int64_t labelsGeneration, std::int64_t boundAt) const {
  return !labelsCoverPod(labelsGeneration, boundAt, options_.labelClockSkewSeconds);
}

// ---------------------------------------------------------------- nodes

void ClusterState::setNodeLocked(NodeInfo node, NameSet& dirty) {
  std::string name = node.name;
  if (builder_.upsertNode(std::move(node),
                          std::make_shared<const NodeCharges>(ledger_.charges(name)))) {
    // New labels may cover pods they did not cover before (or the reverse).
    const std::int64_t generation = labelsGenerationLocked(name);
    ledger_.recount(name,
                    [&](const LedgerPod& pod) { return countedLocked(generation, pod.boundAt); });
  }
  dirty.insert(std::move(name));
}

void ClusterState::replaceNodes(std::vector<NodeInfo> nodes) {
  MutexLock lock(mutex_);
  NameSet dirty;
  NameSet listed;
  for (NodeInfo& node : nodes) {
    listed.insert(node.name);
    setNodeLocked(std::move(node), dirty);
  }
  for (std::string& name : builder_.names()) {
    if (listed.count(name) == 0) {
      builder_.removeNode(name);
      dirty.insert(std::move(name));
    }
  }
  refreshLocked(dirty);
}

void ClusterState::upsertNode(NodeInfo node) {
  MutexLock lock(mutex_);
  NameSet dirty;
  setNodeLocked(std::move(node), dirty);
  refreshLocked(dirty);
}

void ClusterState::removeNode(std::string_view name) {
  MutexLock lock(mutex_);
  builder_.removeNode(name);
  refreshLocked(NameSet{std::string(name)});
}

// ---------------------------------------------------------------- pods

void ClusterState::upsertPodLocked(ObservedPod observed, NameSet& dirty) {
  const std::string uid = podKey(observed.pod);
  const bool wasPending = pending_.erase(uid);
  if (wasPending) groups_.touchMember(uid);
  if (observed.pod.terminal()) {
    // Succeeded/Failed pods hold no devices any more.
    erasePodLocked(uid, dirty);
    eraseReservationLocked(uid, dirty);
    groups_.memberGone(uid, dirty);
    if (options_.events) gone_.push_back(uid);
    return;
  }
  if (!holdsDevices(observed.pod)) {
    erasePodLocked(uid, dirty);
    groups_.memberGone(uid, dirty);
    return;
  }
  if (observed.pod.nodeName.empty() && observed.pod.nominatedNodeName.empty()) {
    // Pending and not nominated: nothing to account or preempt, kept for bind to read. A
    // reservation made for it by a bind in flight stays until the bind finishes.
    erasePodLocked(uid, dirty);
    if (auto key = groupKeyLocked(observed.pod); key && ledger_.reservation(uid) == nullptr) {
      groups_.memberPending(uid, *key);
    }
    pending_.put(uid, trimmedLocked(std::move(observed.pod)));
    return;
  }
  // A member kube-scheduler nominated and has not bound (its preemption's victims are still
  // leaving): the group's later members are anchored to its node's domain.
  std::optional<std::string> nominatedGroup;
  if (observed.pod.nodeName.empty()) nominatedGroup = groupKeyLocked(observed.pod);
  LedgerPod record;
  record.pod = trimmedLocked(std::move(observed.pod));
  const std::string node = record.pod.nodeName;
  if (nominatedGroup) groups_.memberNominated(uid, *nominatedGroup, record.pod.nominatedNodeName);
  if (!node.empty()) {
    const LedgerPod* existing = ledger_.pod(uid);
    if (existing != nullptr && existing->pod.nodeName == node) {
      // Same binding: keep what was decided when it was first seen.
      record.boundAt = existing->boundAt;
      record.allocation = existing->allocation;
      record.unplacedGpus = existing->unplacedGpus;
    } else {
      record.boundAt = observed.boundAt.value_or(nowSeconds());
      const LedgerReservation* reservation = ledger_.reservation(uid);
      // A placement made while the cache watched: the pod was pending, nominated or being bound
      // by this replica before (not a pod of a first list, bound long ago).
      const bool watched = wasPending || reservation != nullptr ||
                           (existing != nullptr && existing->pod.nodeName.empty());
      if (watched && options_.events) newlyBound_.push_back(uid);
      if (reservation != nullptr && reservation->node == node) {
        // Our own bind: the GPUs reserved are the ones to count, from the reservation on.
        record.allocation = reservation->allocation;
        record.boundAt = std::max(record.boundAt, reservation->reservedAt);
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
    record.counted = countedLocked(labelsGenerationLocked(node), record.boundAt);
    eraseReservationLocked(uid, dirty);
    dirty.insert(node);
    groupMemberPlacedLocked(uid, record.pod, node,
                            record.allocation ? &*record.allocation : nullptr, dirty);
  }
  if (auto left = ledger_.putPod(uid, std::move(record)); left && !left->empty()) {
    dirty.insert(std::move(*left));
  }
}

std::optional<std::string> ClusterState::groupKeyLocked(const PodInfo& pod) const {
  return podGroupKey(pod, *policy_);
}

void ClusterState::groupMemberPlacedLocked(const std::string& uid, const PodInfo& pod,
                                           const std::string& node, const Allocation* allocation,
                                           NameSet& dirty) {
  const auto key = groupKeyLocked(pod);
  if (!key) return;
  const Result<PodDemand> demand = parsePodDemand(pod, *policy_);
  groups_.memberPlaced(
      uid, *key, node, allocation, demand ? &*demand : nullptr, options_.now(),
      policy_->groups.holdTtlMillis,
      [this](const std::string& name) GTE_REQUIRES(mutex_) { return builder_.groupDomains(name); },
      dirty);
}

void ClusterState::erasePodLocked(const std::string& uid, NameSet& dirty) {
  if (auto node = ledger_.erasePod(uid); node && !node->empty()) dirty.insert(std::move(*node));
}

void ClusterState::eraseReservationLocked(const std::string& uid, NameSet& dirty) {
  if (auto node = ledger_.eraseReservation(uid)) dirty.insert(std::move(*node));
}

void ClusterState::replacePods(std::vector<ObservedPod> pods) {
  Events events;
  {
    MutexLock lock(mutex_);
    replacePodsLocked(std::move(pods));
    events = takeEventsLocked();
  }
  deliver(events);
}

void ClusterState::replacePodsLocked(std::vector<ObservedPod> pods) {
  NameSet dirty;
  NameSet listed;
  for (ObservedPod& observed : pods) {
    listed.insert(podKey(observed.pod));
    upsertPodLocked(std::move(observed), dirty);
  }
  for (const std::string& uid : ledger_.podUids()) {
    if (listed.count(uid) != 0) continue;
    erasePodLocked(uid, dirty);
    groups_.memberGone(uid, dirty);
    if (options_.events) gone_.push_back(uid);
  }
  // keepOnly, a template, calls the lambda in place with mutex_ held; clang cannot carry the lock
  // into a lambda a template calls, so the lambda alone is not analysed.
  pending_.keepOnly([&](const std::string& uid) GTE_NO_THREAD_SAFETY_ANALYSIS {
    if (listed.count(uid) != 0) return true;
    groups_.memberGone(uid, dirty);
    return false;
  });
  refreshLocked(dirty);
}

void ClusterState::upsertPod(ObservedPod pod) {
  Events events;
  {
    MutexLock lock(mutex_);
    NameSet dirty;
    upsertPodLocked(std::move(pod), dirty);
    refreshLocked(dirty);
    events = takeEventsLocked();
  }
  deliver(events);
}

void ClusterState::removePod(std::string_view uid) {
  Events events;
  {
    MutexLock lock(mutex_);
    NameSet dirty;
    const std::string key(uid);
    erasePodLocked(key, dirty);
    eraseReservationLocked(key, dirty);
    pending_.erase(key);
    groups_.memberGone(key, dirty);
    if (options_.events) gone_.push_back(key);
    refreshLocked(dirty);
    events = takeEventsLocked();
  }
  deliver(events);
}

void ClusterState::setSynced(bool synced) {
  MutexLock lock(mutex_);
  builder_.setSynced(synced);
  publishLocked();
}

void ClusterState::setPolicy(PolicyConstSharedPtr policy) {
  MutexLock lock(mutex_);
  NameSet dirty;
  if (policy->groups.levels != policy_->groups.levels ||
      policy->labelPrefix != policy_->labelPrefix) {
    // Plans name domains by the old levels' ids: members plan again under the new levels.
    groups_.releaseAll(HoldRelease::kPolicy, dirty);
  }
  policy_ = policy;
  reparseMembers_ = true;  // demands read annotations and tables under the policy
  builder_.setPolicy(std::move(policy));
  for (std::string& name : builder_.names()) {
    const std::int64_t generation = labelsGenerationLocked(name);
    ledger_.recount(name,
                    [&](const LedgerPod& pod) { return countedLocked(generation, pod.boundAt); });
    dirty.insert(std::move(name));
  }
  refreshLocked(dirty);
}

// ---------------------------------------------------------------- bind

Result<Allocation> ClusterState::reserve(const PodInfo& pod, const std::string& node) {
  MutexLock lock(mutex_);
  NameSet dirty;
  expireLocked(dirty);
  const std::string uid = podKey(pod);
  // Publish whatever expiry freed, whichever way this returns.
  struct RefreshOnExit {
    ClusterState& state;
    NameSet& dirty;
    ~RefreshOnExit() { state.refreshLocked(dirty); }
  } refreshOnExit{*this, dirty};

  if (const LedgerPod* bound = ledger_.pod(uid); bound != nullptr && !bound->pod.nodeName.empty()) {
    if (bound->pod.nodeName != node) {
      return Error{ErrorCode::kFailedPrecondition,
                   "pod " + podName(pod) + " is already bound to node " + bound->pod.nodeName};
    }
    return bound->allocation.value_or(Allocation{true, {}, {}});
  }
  if (const LedgerReservation* held = ledger_.reservation(uid); held != nullptr) {
    if (held->node == node) return held->allocation;
    // A bind to another node while this one holds GPUs: the earlier Binding is in flight or has
    // landed and the watch has not shown it yet (kube-scheduler retries elsewhere after its bind
    // timeout). Moving the reservation would free GPUs the pod may hold already, so the retry is
    // refused until the earlier bind ends (a failed bind releases at once) or is seen bound.
    return Error{ErrorCode::kFailedPrecondition,
                 "pod " + podName(pod) + " is being bound to node " + held->node +
                     " by an earlier bind (in flight, or landed and not yet seen through the "
                     "watch); not moved to node " +
                     node};
  }
  if (builder_.read(node) == nullptr) {
    return Error{ErrorCode::kNotFound, "node " + node + " is not in the cache"};
  }
  // Compiled as filter compiles it: an invalid request or annotation (group annotations included)
  // is refused here as filter refuses it on every node.
  const CompiledPod compiled = compilePod(pod, *policy_, draObjectsLocked(), groupSizes_);
  if (const Error* error = compiled.ownError()) return *error;
  const Result<PodDemand>& demand = compiled.demand;
  // The published snapshot is current for every node (each change publishes), except for what
  // this call itself freed above.
  refreshLocked(dirty);
  dirty.clear();
  const ClusterSnapshotConstSharedPtr now = snapshot();
  const NodeState* state = now->find(node);
  if (state == nullptr) {
    return Error{ErrorCode::kInternal, "node " + node + " has no state in the snapshot"};
  }
  // What is the pod's own on the node is judged free: a member of a group binding where its group
  // holds slots decides with those slots free (they were kept for it), and a pod with
  // ResourceClaims with the devices its claims hold free (kube-scheduler's PreBind allocates them
  // before it calls the extender's bind).
  std::vector<std::string> own;
  if (const auto key = groupKeyLocked(pod)) own = groups_.holdUids(*key, node);
  if (dra_ && options_.events) {
    const DraBindCheck check = checkDraBind(pod, *state, *dra_->objects(), *now->policy, own);
    if (check != DraBindCheck::kNotApplicable) options_.events->draBindChecked(check);
  }
  if (demand->draClaims()) own.push_back(uid);
  NodeStateConstSharedPtr withoutOwn;
  if (!own.empty()) {
    withoutOwn = nodeStateWithout(*state, own, *now->policy);
    state = withoutOwn.get();
  }
  // The decision filter made (claims by the DRA allocator's first-fit, the rest by the device
  // plugin's pick), now against everything placed since: a bind is refused exactly when filter
  // would refuse the node now, with filter's reason.
  const NodeDecider decider(*demand, *now->policy);
  const FitOutcome fit =
      demand->empty()
          ? FitOutcome{}
          : decider.decide(NodeCandidate{node, state, {}, nullptr}, DecisionPart::kVerdict).fit;
  if (!fit.fits()) {
    return Error{ErrorCode::kFailedPrecondition, fitReasonText(fit, *demand)};
  }
  // The reservation holds what the device plugin hands out (whole GPUs, MIG instances): a claim's
  // devices are the claim's own, allocated by kube-scheduler at PreBind and accounted from its
  // allocation, so they are not reserved again here.
  Allocation allocation =
      demand->empty() ? Allocation{true, {}, {}} : predictAllocation(*demand, *state);
  if (!allocation.complete) {
    return Error{ErrorCode::kInternal, "node " + node + " fits pod " + podName(pod) +
                                           " but no allocation could be predicted"};
  }
  ledger_.putReservation(uid, LedgerReservation{trimmedLocked(pod), node, allocation, nowSeconds(),
                                                options_.now() + options_.reservationTtl});
  dirty.insert(node);
  groupMemberPlacedLocked(uid, pod, node, &allocation, dirty);
  return allocation;
}

void ClusterState::release(std::string_view uid) {
  MutexLock lock(mutex_);
  NameSet dirty;
  if (ledger_.reservation(uid) != nullptr) groups_.memberUnplaced(std::string(uid), dirty);
  eraseReservationLocked(std::string(uid), dirty);
  refreshLocked(dirty);
}

void ClusterState::markBound(std::string_view uid) {
  Events events;
  {
    MutexLock lock(mutex_);
    markBoundLocked(std::string(uid));
    events = takeEventsLocked();
  }
  deliver(events);
}

void ClusterState::markBoundLocked(const std::string& key) {
  const LedgerReservation* held = ledger_.reservation(key);
  if (held == nullptr) return;
  LedgerPod record;
  record.pod = held->pod;
  record.pod.nodeName = held->node;
  record.boundAt = held->reservedAt;
  record.allocation = held->allocation;
  record.counted = true;  // bound now: no labels written yet can cover it
  const std::string node = held->node;
  if (pending_.erase(key)) groups_.touchMember(key);
  if (options_.events) newlyBound_.push_back(key);
  NameSet dirty{node};
  ledger_.putPod(key, std::move(record));
  eraseReservationLocked(key, dirty);
  refreshLocked(dirty);
}

std::size_t ClusterState::expireLocked(NameSet& dirty) {
  std::vector<std::string> nodes;
  std::vector<std::string> uids;
  const std::size_t expired = ledger_.expire(options_.now(), nodes, &uids);
  for (std::string& node : nodes)
    dirty.insert(std::move(node));
  // A bind that never finished: its member waits again, and its group's slot is held again.
  for (const std::string& uid : uids)
    groups_.memberUnplaced(uid, dirty);
  groups_.expire(options_.now(), dirty);
  return expired;
}

std::size_t ClusterState::releasePodGroupHolds(std::string_view ns, std::string_view name) {
  MutexLock lock(mutex_);
  std::set<std::string> keys;
  keys.insert(std::string(ns) + "/" + std::string(groupSourceName(GroupSource::kPodGroup)) + "/" +
              std::string(name));
  // forEach, a template, calls the lambda in place with mutex_ held; clang cannot carry the lock
  // into a lambda a template calls, so the lambda alone is not analysed.
  pending_.forEach([&](const std::string&, const PodInfo& pod) GTE_NO_THREAD_SAFETY_ANALYSIS {
    if (pod.ns != ns || pod.podGroupName != name) return;
    if (auto key = groupKeyLocked(pod)) keys.insert(std::move(*key));
  });
  NameSet dirty;
  std::size_t released = 0;
  for (const std::string& key : keys)
    released += groups_.release(key, HoldRelease::kUnschedulable, dirty);
  refreshLocked(dirty);
  return released;
}

std::size_t ClusterState::expireReservations() {
  MutexLock lock(mutex_);
  NameSet dirty;
  const std::size_t expired = expireLocked(dirty);
  refreshLocked(dirty);
  return expired;
}

// ---------------------------------------------------------------- accounting

// Pods first counted now get the device plugin's predicted pick, in bind order, each against the
// node as the ones before it left it.
void ClusterState::predictLocked(const std::string& node) {
  const NodeState* read = builder_.read(node);
  if (read == nullptr) return;  // bound to a node not (yet) in the cache: predicted once it is
  const std::vector<std::string> waiting = ledger_.unpredicted(node);
  for (const std::string& uid : waiting) {
    const PodInfo& pod = ledger_.pod(uid)->pod;
    Result<PodDemand> demand = parsePodDemand(pod, *policy_, draObjectsLocked());
    Allocation allocation{true, {}, {}};
    std::int64_t unplaced = 0;
    if (!demand) {
      unplaced = wholeGpusRequested(pod);
    } else if (!demand->empty()) {
      const NodeStateConstSharedPtr state =
          rebuildNodeState(*read, ledger_.charges(node).usage(), *policy_);
      allocation = predictAllocation(*demand, *state);
      if (!allocation.complete) {
        // The labels or earlier pods say there is no room; the pod runs anyway, so count it.
        allocation = Allocation{false, {}, {}};
        unplaced = demand->gpus;
      }
    }
    ledger_.setAllocation(uid, std::move(allocation), unplaced);
  }
}

// ---------------------------------------------------------------- DRA

const dra::DraObjects* ClusterState::draObjectsLocked() const {
  return dra_ ? dra_->objects().get() : nullptr;
}

void ClusterState::enableDra() {
  MutexLock lock(mutex_);
  if (dra_) return;
  dra_ = std::make_unique<DraCache>();
  builder_.setDra(&dra_->slices(), &dra_->allocated(), dra_->objects());
  publishLocked();
}

template <typename Update>
void ClusterState::changeDra(Update&& update) {
  MutexLock lock(mutex_);
  if (!dra_) return;
  DraChange change;
  update(*dra_, change);
  if (change.objects) {
    builder_.setDraObjects(dra_->objects());
    reparseDraMembers_ = true;  // a claim member's demand resolves against the objects
  }
  if (change.everyNode) {
    builder_.draAllNodesChanged();
  } else {
    for (const std::string& node : change.nodes)
      builder_.draNodeChanged(node);
  }
  publishLocked();
}

void ClusterState::replaceResourceSlices(std::vector<dra::ResourceSliceConstSharedPtr> slices) {
  changeDra([&](DraCache& dra, DraChange& c) { dra.replaceSlices(std::move(slices), c); });
}
void ClusterState::upsertResourceSlice(dra::ResourceSliceConstSharedPtr slice) {
  changeDra([&](DraCache& dra, DraChange& c) { dra.upsertSlice(std::move(slice), c); });
}
void ClusterState::removeResourceSlice(std::string_view name) {
  changeDra([&](DraCache& dra, DraChange& c) { dra.removeSlice(name, c); });
}
void ClusterState::replaceDeviceClasses(std::vector<dra::DeviceClassConstSharedPtr> classes) {
  changeDra([&](DraCache& dra, DraChange& c) { dra.replaceClasses(std::move(classes), c); });
}
void ClusterState::upsertDeviceClass(dra::DeviceClassConstSharedPtr cls) {
  changeDra([&](DraCache& dra, DraChange& c) { dra.upsertClass(std::move(cls), c); });
}
void ClusterState::removeDeviceClass(std::string_view name) {
  changeDra([&](DraCache& dra, DraChange& c) { dra.removeClass(name, c); });
}
void ClusterState::replaceDeviceTaintRules(std::vector<dra::DeviceTaintRuleConstSharedPtr> rules) {
  changeDra([&](DraCache& dra, DraChange& c) { dra.replaceTaintRules(std::move(rules), c); });
}
void ClusterState::upsertDeviceTaintRule(dra::DeviceTaintRuleConstSharedPtr rule) {
  changeDra([&](DraCache& dra, DraChange& c) { dra.upsertTaintRule(std::move(rule), c); });
}
void ClusterState::removeDeviceTaintRule(std::string_view name) {
  changeDra([&](DraCache& dra, DraChange& c) { dra.removeTaintRule(name, c); });
}
void ClusterState::replaceResourceClaims(std::vector<dra::ResourceClaimConstSharedPtr> claims) {
  changeDra([&](DraCache& dra, DraChange& c) { dra.replaceClaims(std::move(claims), c); });
}
void ClusterState::upsertResourceClaim(dra::ResourceClaimConstSharedPtr claim) {
  changeDra([&](DraCache& dra, DraChange& c) { dra.upsertClaim(std::move(claim), c); });
}
void ClusterState::removeResourceClaim(std::string_view ns, std::string_view name) {
  changeDra([&](DraCache& dra, DraChange& c) { dra.removeClaim(ns, name, c); });
}

DraCounts ClusterState::draCounts() const {
  MutexLock lock(mutex_);
  return dra_ ? dra_->counts() : DraCounts{};
}

void ClusterState::refreshLocked(const NameSet& dirty, const NameSet& checked) {
  for (const std::string& name : dirty) {
    predictLocked(name);
    NodeCharges charges = ledger_.charges(name);
    if (groups_.holdsOn(name)) {
      // Holds give way to pods: a pod bound where a hold was (by someone other than this
      // extender) keeps its GPUs, and the hold moves to GPUs still free, or ends.
      const NodeState* read = builder_.read(name);
      if (read != nullptr && checked.count(name) == 0) {
        // The node as every pod's charge leaves it, without holds; on a DRA node as its claims
        // leave it (the same state the snapshot builds, less the holds).
        const auto withoutHolds = chargeNodeState(
            *read, std::make_shared<const NodeCharges>(charges), *policy_, builder_.draState(name));
        groups_.repair(name, *withoutHolds, *policy_);
      }
      groups_.addHolds(name, charges);
    }
    builder_.setCharges(name, std::make_shared<const NodeCharges>(std::move(charges)));
  }
  builder_.setGroupPlans(groups_.table());
  publishLocked();
}

ClusterState::Events ClusterState::takeEventsLocked() {
  Events events;
  events.gone = std::exchange(gone_, {});
  for (const std::string& uid : std::exchange(newlyBound_, {})) {
    const LedgerPod* bound = ledger_.pod(uid);
    if (bound == nullptr || bound->pod.nodeName.empty()) continue;  // gone again meanwhile
    PodPlacement placement;
    placement.uid = uid;
    placement.ns = bound->pod.ns;
    placement.name = bound->pod.name;
    placement.node = bound->pod.nodeName;
    placement.gpus = wholeGpusRequested(bound->pod);
    if (bound->allocation && bound->allocation->complete && bound->unplacedGpus == 0) {
      placement.indices = bound->allocation->gpus;
    }
    if (const NodeState* read = builder_.read(placement.node)) {
      placement.got = heldSetQuality(read->topology, placement.indices);
    }
    events.placed.push_back(std::move(placement));
  }
  return events;
}

void ClusterState::deliver(const Events& events) const {
  if (!options_.events) return;
  for (const PodPlacement& placement : events.placed)
    options_.events->podPlaced(placement);
  for (const std::string& uid : events.gone)
    options_.events->podGone(uid);
}

void ClusterState::publishLocked() {
  const auto started = std::chrono::steady_clock::now();
  builder_.setGroupMembers(memberTableLocked());
  ClusterSnapshotConstSharedPtr next = builder_.build();
  if (options_.events) {
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
    options_.events->snapshotBuilt(took.count());
  }
  MutexLock lock(snapshotMutex_);
  current_ = std::move(next);
}

// ---------------------------------------------------------------- pod groups

void ClusterState::setGroupSizes(const GroupSizeLookup* sizes) {
  MutexLock lock(mutex_);
  groupSizes_ = sizes;
}

GroupMemberTableConstSharedPtr ClusterState::memberTableLocked() {
  std::set<std::string> changed = groups_.takeMembersChanged();
  if (members_ && (reparseMembers_ || reparseDraMembers_)) {
    for (const auto& [key, view] : *members_) {
      const bool readsDra =
          std::any_of(view->waiting.begin(), view->waiting.end(),
                      [](const WaitingMember& member) { return member.readsDra; });
      if (reparseMembers_ || readsDra) changed.insert(key);
    }
  }
  reparseMembers_ = reparseDraMembers_ = false;
  if (members_ && changed.empty()) return members_;
  auto next = members_ ? std::make_shared<GroupMemberTable>(*members_)
                       : std::make_shared<GroupMemberTable>();
  for (const std::string& key : changed) {
    GroupMemberView view;
    view.placedNodes = groups_.placedNodes(key);
    view.nominated = groups_.nominated(key);
    for (const std::string& uid : groups_.waiting(key)) {
      const PodInfo* pending = pending_.find(uid);
      if (pending == nullptr) continue;
      WaitingMember member{pending->ns, pending->name, pending->uid, std::nullopt, false};
      Result<PodDemand> demand = parsePodDemand(*pending, *policy_, draObjectsLocked());
      member.readsDra = !pending->resourceClaims.empty() || (demand && demand->dra);
      if (demand) member.demand = std::move(*demand);
      view.waiting.push_back(std::move(member));
    }
    if (view.placedNodes.empty() && view.waiting.empty() && view.nominated.empty()) {
      next->erase(key);
    } else {
      next->insert_or_assign(key, std::make_shared<const GroupMemberView>(std::move(view)));
    }
  }
  members_ = std::move(next);
  return members_;
}

Result<CommittedGroupPlanConstSharedPtr> ClusterState::commitGroupPlan(CommittedGroupPlan plan) {
  MutexLock lock(mutex_);
  NameSet dirty;
  expireLocked(dirty);
  const std::string key = plan.key;
  const auto published = [this, &key]() GTE_REQUIRES(mutex_) -> CommittedGroupPlanConstSharedPtr {
    const GroupPlanTableConstSharedPtr table = groups_.table();
    const auto it = table->find(key);
    return it == table->end() ? nullptr : it->second;
  };
  if (groups_.plan(key) != nullptr) {
    refreshLocked(dirty);
    return published();
  }
  // The plan was made on a snapshot at most a few requests old: its GPUs must still be free in
  // the one published now (which counts every hold and reservation made since), and no two slots
  // of one node may share a GPU.
  const ClusterSnapshotConstSharedPtr now = snapshot();
  std::unordered_map<std::string, GpuMask> taken;
  for (const PlannedSlot& slot : plan.plan.slots) {
    const NodeState* state = now->find(slot.node);
    GpuMask gpus = 0;
    for (const int gpu : slot.allocation.gpus)
      gpus |= GpuMask{1} << static_cast<unsigned>(gpu);
    GpuMask& onNode = taken[slot.node];
    if (state == nullptr || (gpus & ~state->freeMask) != 0 || (gpus & onNode) != 0) {
      refreshLocked(dirty);
      return Error{ErrorCode::kUnavailable, "group " + plan.group + ": planned GPUs on node " +
                                                slot.node + " were taken meanwhile"};
    }
    onNode |= gpus;
  }
  NameSet planned;
  groups_.commit(std::move(plan), options_.now(), policy_->groups.holdTtlMillis, planned);
  NameSet checked;
  for (const std::string& node : planned) {
    if (dirty.count(node) == 0) checked.insert(node);
    dirty.insert(node);
  }
  refreshLocked(dirty, checked);
  return published();
}

CommittedGroupPlanConstSharedPtr ClusterState::pinGroupMember(std::string_view key,
                                                              std::uint64_t sequence,
                                                              std::size_t slot,
                                                              const std::string& uid) {
  MutexLock lock(mutex_);
  if (groups_.pin(key, sequence, slot, uid)) refreshLocked({});
  const GroupPlanTableConstSharedPtr table = groups_.table();
  const auto it = table->find(key);
  return it == table->end() ? nullptr : it->second;
}

std::size_t ClusterState::heldSlotCount() const {
  MutexLock lock(mutex_);
  return groups_.heldSlots();
}

// ---------------------------------------------------------------- queries

std::optional<PodInfo> ClusterState::podToBind(std::string_view uid) const {
  MutexLock lock(mutex_);
  if (const PodInfo* pending = pending_.find(uid)) return *pending;
  if (const LedgerPod* pod = ledger_.pod(uid)) return pod->pod;
  return std::nullopt;
}

std::optional<PodInfo> ClusterState::podByUid(std::string_view uid) const {
  MutexLock lock(mutex_);
  if (const LedgerPod* pod = ledger_.pod(uid)) return pod->pod;
  if (const LedgerReservation* held = ledger_.reservation(uid)) {
    PodInfo pod = held->pod;
    pod.nodeName = held->node;
    return pod;
  }
  return std::nullopt;
}

std::vector<PodInfo> ClusterState::podsOnNode(std::string_view node) const {
  MutexLock lock(mutex_);
  return ledger_.podsOn(node);
}

std::size_t ClusterState::nodeCount() const {
  MutexLock lock(mutex_);
  return builder_.nodeCount();
}

std::size_t ClusterState::podCount() const {
  MutexLock lock(mutex_);
  return ledger_.podCount();
}

std::size_t ClusterState::pendingCount() const {
  MutexLock lock(mutex_);
  return pending_.size();
}

PendingByGpus ClusterState::pendingByGpus() const {
  MutexLock lock(mutex_);
  return pending_.byGpus();
}

std::size_t ClusterState::reservationCount() const {
  MutexLock lock(mutex_);
  return ledger_.reservationCount();
}

}  // namespace gte::cluster
