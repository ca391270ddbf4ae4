#pragma once
// The extender's own, thread-safe truth about the cluster in nodeCacheCapable mode: nodes by name,
// pods by UID, and which GPUs are taken, published as immutable ClusterSnapshots: every change
// builds a new snapshot (re-deriving only the nodes it touched, by generation) and swaps
// the pointer; readers never wait for a writer.
//
// The node records live in the snapshot builder (one copy of each NodeInfo and of what was read
// from its labels); the pods live in a PodLedger that keeps each node's charges as pods come and
// go. Pods that request no GPU or MIG device are not kept: they hold nothing the extender accounts.
// Pending GPU pods (neither bound nor nominated) are kept apart, charging nothing: bind reads the
// pod it binds from here instead of asking the API server.
//
// GPUs taken on a node = what its labels say (`used`, inside NodeState) + the extender's usage on
// top, made of:
//   - bound pods the labels do not reflect yet: a pod counts while the node agent's last write
//     (`gen`, unix seconds) is not after the pod's bind time. Its GPUs are the ones recorded in its
//     `<prefix>gpus` annotation, or else predicted (the device plugin's choice) when first counted;
//   - reservations: pods this replica is binding, reserved atomically with the check that they
//     fit, until they are seen bound, deleted, released or their TTL expires.
// Nodes without labels-v1 (or with malformed ones) have no `used`/`gen`: every bound pod counts.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/mutex.h"
#include "base/result.h"
#include "cluster/cluster_events.h"
#include "cluster/dra_bind_check.h"
#include "cluster/dra_cache.h"
#include "cluster/group_book.h"
#include "cluster/pending_pods.h"
#include "cluster/pod_ledger.h"
#include "core/allocation.h"
#include "group/pod_group.h"
#include "health/placement_regret.h"
#include "model/node_info.h"
#include "model/pod_info.h"
#include "service/group_plan_store.h"
#include "snapshot/cluster_snapshot.h"
#include "snapshot/cluster_snapshot_builder.h"

namespace gte::cluster {

using WallClock = std::function<std::chrono::system_clock::time_point()>;

struct ClusterStateOptions {
  // A reservation not seen bound within this long is dropped (the bind call died half way, or the
  // pod was deleted while the watch was down).
  std::chrono::milliseconds reservationTtl{std::chrono::seconds(60)};
  // Labels count as covering a pod only when written more than this many seconds after its bind;
  // raise it when node clocks run ahead of the API server's.
  std::int64_t labelClockSkewSeconds = 0;
  WallClock now = [] { return std::chrono::system_clock::now(); };
  // Who is told of snapshot builds, group holds and placements, placements and departures of pods,
  // and DRA bind checks (cluster/cluster_events.h); null: nobody (and what only they read, such as
  // a placement's GPU set quality, is not worked out).
  std::shared_ptr<ClusterEvents> events;
  // The node label whose value groups nodes in the snapshots' health figures (empty: the GPU
  // model).
  std::string healthPoolLabel;
};

// A pod as the watch or a cluster file reports it.
struct ObservedPod {
  PodInfo pod;
  // Unix seconds of the bind (PodInfo::boundAt); nullopt = unknown, then the time it is first seen
  // bound is used.
  std::optional<std::int64_t> boundAt;
};

// Whether the node agent's labels written at `labelsGeneration` already include a pod bound at
// `boundAt` (both unix seconds; generation 0 = no labels-v1 generation: never).
bool labelsCoverPod(std::int64_t labelsGeneration, std::int64_t boundAt,
                    std::int64_t clockSkewSeconds) noexcept;

// Whether the cache keeps the pod at all: it asks for a GPU or MIG device (or its requests are
// unreadable, so it may hold some), or references ResourceClaims (bind then reads it from the
// cache). Other pods hold nothing the extender accounts.
bool holdsDevices(const PodInfo& pod);

class ClusterState final : public GroupPlanStore {
 public:
  explicit ClusterState(PolicyConstSharedPtr policy, ClusterStateOptions options = {});
  ~ClusterState() override = default;
  ClusterState(const ClusterState&) = delete;
  ClusterState& operator=(const ClusterState&) = delete;

  // Never null. Lock-free for practical purposes: only a pointer copy under a dedicated mutex.
  ClusterSnapshotConstSharedPtr snapshot() const;

  // The part of a pod the cache keeps: the extender's own annotations and the device requests.
  // List consumers call it per item so a full list never holds whole pods.
  PodInfo compact(PodInfo pod) const;

  // --- Fed by the watch (or a cluster file). Each call publishes a new snapshot.
  void replaceNodes(std::vector<NodeInfo> nodes);  // after a full list
  void upsertNode(NodeInfo node);
  void removeNode(std::string_view name);
  // Terminal pods and pods holding no device are dropped (and forgotten if known); pods neither
  // bound nor nominated are kept as pending, charging nothing.
  void replacePods(std::vector<ObservedPod> pods);  // after a full list
  void upsertPod(ObservedPod pod);
  void removePod(std::string_view uid);
  void setSynced(bool synced);
  // Re-derives every node (the policy's label prefix, link scores and MIG table feed NodeState).
  void setPolicy(PolicyConstSharedPtr policy);

  // --- DRA (docs/dra.md), fed by the resource.k8s.io/v1 watches. Until enableDra() the snapshots
  // carry no DRA inputs and pods are read as before (no claim is resolved, no node is a DRA node).
  void enableDra();
  void replaceResourceSlices(std::vector<dra::ResourceSliceConstSharedPtr> slices);  // full list
  void upsertResourceSlice(dra::ResourceSliceConstSharedPtr slice);
  void removeResourceSlice(std::string_view name);
  void replaceDeviceClasses(std::vector<dra::DeviceClassConstSharedPtr> classes);
  void upsertDeviceClass(dra::DeviceClassConstSharedPtr cls);
  void removeDeviceClass(std::string_view name);
  void replaceDeviceTaintRules(std::vector<dra::DeviceTaintRuleConstSharedPtr> rules);
  void upsertDeviceTaintRule(dra::DeviceTaintRuleConstSharedPtr rule);
  void removeDeviceTaintRule(std::string_view name);
  void replaceResourceClaims(std::vector<dra::ResourceClaimConstSharedPtr> claims);
  void upsertResourceClaim(dra::ResourceClaimConstSharedPtr claim);
  void removeResourceClaim(std::string_view ns, std::string_view name);
  // Zero counts while DRA is off.
  DraCounts draCounts() const;

  // --- Bind. Checks that `pod` fits `node` given everything counted and reserved, and reserves
  // the predicted GPUs, atomically: concurrent reservations never share a GPU. Idempotent: a pod
  // already bound to or reserved on `node` returns its allocation. Errors: kNotFound (node
  // unknown), kFailedPrecondition (no room, or bound to another node), kInvalidArgument (bad
  // topology annotations).
  // The pod is compiled as filter compiles it (compilePod, with the sizes of setGroupSizes): a
  // pod filter refuses everywhere (an invalid annotation, group annotations included) is refused.
  Result<Allocation> reserve(const PodInfo& pod, const std::string& node);
  // The pod-group owners' sizes the backend knows (thread-safe, outliving this state), read by
  // bind's compile of the pod; null: none.
  void setGroupSizes(const GroupSizeLookup* sizes);
  // The bind failed: free the reservation.
  void release(std::string_view uid);
  // No API server to confirm (cluster-file mode): the reservation becomes a bound pod.
  void markBound(std::string_view uid);
  // Drops reservations past their TTL, and releases pod-group holds past theirs; returns how many
  // reservations.
  std::size_t expireReservations();

  // --- Pod groups (GroupPlanStore; docs/groups.md).
  Result<CommittedGroupPlanConstSharedPtr> commitGroupPlan(CommittedGroupPlan plan) override;
  CommittedGroupPlanConstSharedPtr pinGroupMember(std::string_view key, std::uint64_t sequence,
                                                  std::size_t slot,
                                                  const std::string& uid) override;
  std::size_t heldSlotCount() const;
  // kube-scheduler gave up on PodGroup `ns`/`name` (PodGroupInitiallyScheduled False,
  // Unschedulable): releases the holds of its group (keyed by the PodGroup, or by whatever names
  // the group on its waiting members, e.g. `<prefix>group`), so its next cycle plans on what is
  // free then. Returns the slots released.
  std::size_t releasePodGroupHolds(std::string_view ns, std::string_view name);

  // --- Queries (copies; the state may change right after).
  // A GPU pod as the watch last reported it, for bind: pending, nominated or bound (nodeName set).
  // nullopt when the cache has not seen it (the watch lags, or it holds no device).
  std::optional<PodInfo> podToBind(std::string_view uid) const;
  // Bound or reserved pods only (preempt's victims).
  std::optional<PodInfo> podByUid(std::string_view uid) const;
  // Bound and reserved pods on `node` (reserved ones with nodeName filled in).
  std::vector<PodInfo> podsOnNode(std::string_view node) const;
  std::size_t nodeCount() const;
  std::size_t podCount() const;  // bound and nominated
  std::size_t pendingCount() const;
  // Pending GPU pods by the whole GPUs they ask for.
  PendingByGpus pendingByGpus() const;
  std::size_t reservationCount() const;

 private:
  // What a change reports through the options' callbacks once the writer lock is released.
  struct Events {
    std::vector<PodPlacement> placed;
    std::vector<std::string> gone;
  };

  std::int64_t nowSeconds() const;
  PodInfo trimmedLocked(PodInfo pod) const GTE_REQUIRES(mutex_);
  // The *Locked mutators add the nodes whose charges may have changed to `dirty`; refreshLocked()
  // then predicts what needs predicting on those, hands their charges to the builder and
  // publishes once.
  void setNodeLocked(NodeInfo node, NameSet& dirty) GTE_REQUIRES(mutex_);
  void upsertPodLocked(ObservedPod observed, NameSet& dirty) GTE_REQUIRES(mutex_);
  void replacePodsLocked(std::vector<ObservedPod> pods) GTE_REQUIRES(mutex_);
  void markBoundLocked(const std::string& uid) GTE_REQUIRES(mutex_);
  void erasePodLocked(const std::string& uid, NameSet& dirty) GTE_REQUIRES(mutex_);
  void eraseReservationLocked(const std::string& uid, NameSet& dirty) GTE_REQUIRES(mutex_);
  std::size_t expireLocked(NameSet& dirty) GTE_REQUIRES(mutex_);
  // The pod's group key under the current policy, if it names one.
  std::optional<std::string> groupKeyLocked(const PodInfo& pod) const GTE_REQUIRES(mutex_);
  void groupMemberPlacedLocked(const std::string& uid, const PodInfo& pod, const std::string& node,
                               const Allocation* allocation, NameSet& dirty) GTE_REQUIRES(mutex_);
  // labels-v1 `gen` of the node's current labels when they read cleanly, else 0.
  std::int64_t labelsGenerationLocked(const std::string& node) GTE_REQUIRES(mutex_);
  // Reads no guarded member (only the options), so it carries no GTE_REQUIRES: the ledger's
  // recount, a template, calls it from a lambda that clang cannot see holding the lock.
  bool countedLocked(std::int64_t labelsGeneration, std::int64_t boundAt) const;
  void predictLocked(const std::string& node) GTE_REQUIRES(mutex_);
  // `checked`: nodes whose holds were just validated against the published state (a commit);
  // their holds are not checked again.
  void refreshLocked(const NameSet& dirty, const NameSet& checked = {}) GTE_REQUIRES(mutex_);
  // Applies a DraCache change to the builder and publishes. `update` runs under the lock; nothing
  // happens while DRA is off.
  template <typename Update>
  void changeDra(Update&& update);
  // The DRA objects pods are resolved against (null while DRA is off).
  const dra::DraObjects* draObjectsLocked() const GTE_REQUIRES(mutex_);
  void publishLocked() GTE_REQUIRES(mutex_);
  // The placements of the pods newly seen bound (their devices predicted by now), and the pods
  // gone, since the last call.
  Events takeEventsLocked() GTE_REQUIRES(mutex_);
  // The member table the next snapshot publishes, with the changed groups re-derived.
  GroupMemberTableConstSharedPtr memberTableLocked() GTE_REQUIRES(mutex_);
  void deliver(const Events& events) const;

  const ClusterStateOptions options_;

  mutable Mutex mutex_;  // the writer lock: guards everything below except current_
  PolicyConstSharedPtr policy_ GTE_GUARDED_BY(mutex_);
  ClusterSnapshotBuilder builder_ GTE_GUARDED_BY(mutex_);  // the node records
  PodLedger ledger_ GTE_GUARDED_BY(mutex_);                // pods, reservations, per-node charges
  PendingPods pending_ GTE_GUARDED_BY(mutex_);             // by UID, trimmed
  GroupBook groups_ GTE_GUARDED_BY(mutex_);                // pod groups, their plans and holds
  std::unique_ptr<DraCache> dra_ GTE_GUARDED_BY(mutex_);   // null while DRA is off
  std::vector<std::string> newlyBound_ GTE_GUARDED_BY(mutex_);  // UIDs for the next Events
  std::vector<std::string> gone_ GTE_GUARDED_BY(mutex_);
  // The pod groups' members as published (the snapshot's groupMembers), re-derived per changed
  // group; every group with a member whose demand reads what changed (the policy, DRA objects)
  // is parsed again.
  GroupMemberTableConstSharedPtr members_ GTE_GUARDED_BY(mutex_);
  const GroupSizeLookup* groupSizes_ GTE_GUARDED_BY(mutex_) = nullptr;
  bool reparseMembers_ GTE_GUARDED_BY(mutex_) = false;     // the policy changed
  bool reparseDraMembers_ GTE_GUARDED_BY(mutex_) = false;  // DRA objects changed

  mutable Mutex snapshotMutex_;  // guards only the pointer
  ClusterSnapshotConstSharedPtr current_ GTE_GUARDED_BY(snapshotMutex_);
};

}  // namespace gte::cluster
