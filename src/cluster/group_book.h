#pragma once
// The cluster cache's pod groups: who belongs to which group (members waiting, members placed),
// each group's committed plan, and the holds its unclaimed slots put on their nodes
// (docs/groups.md#holds). A hold is charged on its node like a reservation, so every other pod's
// filter sees those GPUs as taken; a member claims its slot when it is bound (the hold gives way
// to the member's own charge, same GPUs), and the holds end when members bind, are deleted, or
// the TTL passes without a member binding. It also keeps each held slot's pin (the waiting member
// whose filter was answered with it, docs/groups.md#pins) true as members bind, leave and retry.
// Not thread-safe: the ClusterState owns it under its writer lock, as it owns the PodLedger.
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/allocation.h"
#include "core/node_charges.h"
#include "core/node_state.h"
#include "group/committed_group_plan.h"
#include "group/group_domains.h"
#include "policy/policy.h"

namespace gte::cluster {

// Why held slots stopped being held.
enum class HoldRelease : std::uint8_t {
  kClaimed,    // a member bound into it
  kDeleted,    // a member waiting for it was deleted
  kExpired,    // no member bound within the hold TTL
  kDisplaced,  // a pod the extender did not place took its GPUs, and the node has no room left
  kSurplus,    // a member bound outside the plan: one slot fewer is needed
  kPolicy,     // the policy's levels changed: plans are made again
  // kube-scheduler's gang cycle gave up on the group (its PodGroup's PodGroupInitiallyScheduled
  // condition turned False, reason Unschedulable): the next cycle plans again
  kUnschedulable,
};
std::string_view holdReleaseName(HoldRelease reason) noexcept;
// Every reason's name, in the enum's order: the `reason` label values of
// gte_group_holds_released_total.
std::vector<std::string_view> holdReleaseNames();

// What the book reports, for metrics. Each callback may be empty; they run under the writer lock.
struct GroupBookObserver {
  std::function<void(HoldRelease, std::size_t)> released;
  // A group's last planned member bound: for each level of its plan, whether all its members
  // share one domain of that level (label, whole).
  std::function<void(std::string_view, bool)> placed;
  // Seconds from the group's first member bound to its last.
  std::function<void(double)> firstToLast;
};

using NameSet = std::unordered_set<std::string>;
using WallTime = std::chrono::system_clock::time_point;

class GroupBook {
 public:
  explicit GroupBook(GroupBookObserver observer = {}) : observer_(std::move(observer)) {}

  // --- members, as the watch (or a cluster file, or bind) reports them.
  void memberPending(const std::string& uid, const std::string& key);
  // The member is bound or reserved on `node`: it claims a held slot there (the one whose GPUs
  // are `allocation` when given, else its own pinned slot, else one planned for `demand`'s shape
  // and pinned to no one, else one of that shape, else the first; a member whose pinned slot it
  // took is pinned to the slot this one leaves), or, placed outside the plan, gives up one held
  // slot elsewhere (its own pinned slot if it has one). `domainsOf` names a
  // node's domains (for the placed-whole metric). Adds changed nodes to `dirty`.
  void memberPlaced(const std::string& uid, const std::string& key, const std::string& node,
                    const Allocation* allocation, const PodDemand* demand, WallTime now,
                    std::int64_t ttlMillis,
                    const std::function<GroupDomainIds(const std::string&)>& domainsOf,
                    NameSet& dirty);
  // kube-scheduler nominated the member for `node` (its preemption evicts room there) and it is
  // not bound yet: a later member's preemption takes that node's domain as the group's.
  void memberNominated(const std::string& uid, const std::string& key, const std::string& node);
  // A reservation ended without a bind: the member waits again and its slot is held again.
  void memberUnplaced(const std::string& uid, NameSet& dirty);
  // The pod is gone: a waiting member of a planned group gives up one held slot.
  void memberGone(const std::string& uid, NameSet& dirty);

  // --- plans.
  const CommittedGroupPlan* plan(std::string_view key) const;
  // The keys of the groups whose members (waiting or placed) changed since the last call: what the
  // published member table re-derives.
  std::set<std::string> takeMembersChanged();
  // The pod's group, if it is a member, has changed members (its pending object changed).
  void touchMember(const std::string& uid);
  // Nodes of the group's placed members, and its waiting members' UIDs.
  std::vector<std::string> placedNodes(std::string_view key) const;
  // (UID, node) of the group's nominated members, not yet bound.
  std::vector<std::pair<std::string, std::string>> nominated(std::string_view key) const;
  std::vector<std::string> waiting(std::string_view key) const;
  bool placedMember(std::string_view key, std::string_view uid) const;
  // Pins held slot `slot` of group `key`'s plan (the one committed as `sequence`) to the waiting
  // member `uid` (docs/groups.md#pins), ending the member's earlier pin. Returns false, changing
  // nothing, when the plan is another, the slot is not held, or it is pinned already (to this
  // member or another). The holds do not move: only the published plan changes.
  bool pin(std::string_view key, std::uint64_t sequence, std::size_t slot, const std::string& uid);
  // Stores a plan for a group that has none, holding every slot; the slots' nodes go to `dirty`.
  void commit(CommittedGroupPlan plan, WallTime now, std::int64_t ttlMillis, NameSet& dirty);
  // Releases the slots of plans past their expiry; returns how many slots.
  std::size_t expire(WallTime now, NameSet& dirty);
  void releaseAll(HoldRelease reason, NameSet& dirty);
  // Releases the unclaimed slots of group `key`'s plan (the plan ends: its next member plans
  // again); returns how many slots.
  std::size_t release(std::string_view key, HoldRelease reason, NameSet& dirty);

  // --- charges.
  bool holdsOn(const std::string& node) const { return holds_.count(node) != 0; }
  // The unclaimed slot UIDs of `key` on `node`.
  std::vector<std::string> holdUids(std::string_view key, const std::string& node) const;
  // Checks the holds on `node` against `withoutHolds` (the node with every pod's charge and no
  // hold): each hold's GPUs must be free there and no two holds may share one. If not, gives the
  // node's held slots new GPUs (the device plugin's picks over what is free, in commit order) and
  // releases those that no longer fit (kDisplaced).
  void repair(const std::string& node, const NodeState& withoutHolds, const Policy& policy);
  // Adds the node's holds to its charges.
  void addHolds(const std::string& node, NodeCharges& charges) const;

  // --- what is published.
  GroupPlanTableConstSharedPtr table();
  std::size_t heldSlots() const noexcept;
  std::size_t groupCount() const noexcept { return groups_.size(); }

 private:
  struct Group {
    std::map<std::string, std::string> placed;     // member UID -> node
    std::set<std::string> pending;                 // member UIDs waiting
    std::map<std::string, std::string> nominated;  // member UID -> node, nominated, not bound
    std::optional<WallTime> firstPlaced;
    std::shared_ptr<const CommittedGroupPlan> plan;
  };
  struct SlotRef {
    std::string key;
    std::size_t slot = 0;
  };

  // The member's group, `key`, recorded as its group (both groups' members marked changed when
  // it had another).
  Group& filed(const std::string& uid, const std::string& key);
  Group* find(std::string_view key);
  const Group* find(std::string_view key) const;
  // Replaces the group's plan (copy-on-write) and re-indexes its holds.
  void setPlan(Group& group, std::shared_ptr<CommittedGroupPlan> plan, NameSet& dirty);
  void unindex(const CommittedGroupPlan& plan, NameSet& dirty);
  void index(const CommittedGroupPlan& plan, NameSet& dirty);
  // Drops one held slot of the group's plan, for `reason`: the one pinned to `uid` if any, else
  // the last one pinned to no member, else the last one.
  void releaseOne(Group& group, HoldRelease reason, NameSet& dirty, std::string_view uid = {});
  void finishIfDone(Group& group, WallTime now,
                    const std::function<GroupDomainIds(const std::string&)>& domainsOf);
  void dropIfEmpty(const std::string& key);
  void count(HoldRelease reason, std::size_t n) const;

  GroupBookObserver observer_;
  std::unordered_map<std::string, Group> groups_;       // by group key
  std::unordered_map<std::string, std::string> keyOf_;  // member UID -> group key
  std::map<std::string, std::vector<SlotRef>> holds_;   // node -> its held slots
  std::uint64_t sequence_ = 0;
  std::set<std::string> membersChanged_;  // group keys, since takeMembersChanged
  bool changed_ = true;
  GroupPlanTableConstSharedPtr published_;
};

}  // namespace gte::cluster
