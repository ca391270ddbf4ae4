#include "cluster/group_book.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "group/group_slots.h"
#include "topology/pair_table.h"

namespace gte::cluster {
namespace {

GpuMask maskOf(const Allocation& allocation) {
  GpuMask mask = 0;
  for (const int gpu : allocation.gpus) {
    if (gpu >= 0 && gpu < kMaxGpus) mask |= bitOf(gpu);
  }
  return mask;
}

// Pins held slot `slot` of `plan` to `uid`, ending the member's other pin if it had one.
void pinTo(CommittedGroupPlan& plan, std::size_t slot, const std::string& uid) {
  plan.pinnedTo.resize(plan.plan.slots.size());
  for (std::string& pin : plan.pinnedTo) {
    if (pin == uid) pin.clear();
  }
  plan.pinnedTo[slot] = uid;
}

std::chrono::milliseconds millis(std::int64_t ms) {
  return std::chrono::milliseconds(ms);
}

}  // namespace

std::string_view holdReleaseName(HoldRelease reason) noexcept {
  switch (reason) {
    case HoldRelease::kClaimed:
      return "claimed";
    case HoldRelease::kDeleted:
      return "deleted";
    case HoldRelease::kExpired:
      return "expired";
    case HoldRelease::kDisplaced:
      return "displaced";
    case HoldRelease::kSurplus:
      return "surplus";
    case HoldRelease::kPolicy:
      return "policy";
    case HoldRelease::kUnschedulable:
      return "unschedulable";
  }
  return "expired";
}

std::vector<std::string_view> holdReleaseNames() {
  std::vector<std::string_view> out;
  for (int i = 0; i <= static_cast<int>(HoldRelease::kUnschedulable); ++i)
    out.push_back(holdReleaseName(static_cast<HoldRelease>(i)));
  return out;
}

GroupBook::Group* GroupBook::find(std::string_view key) {
  const auto it = groups_.find(std::string(key));
  return it == groups_.end() ? nullptr : &it->second;
}

const GroupBook::Group* GroupBook::find(std::string_view key) const {
  const auto it = groups_.find(std::string(key));
  return it == groups_.end() ? nullptr : &it->second;
}

void GroupBook::count(HoldRelease reason, std::size_t n) const {
  if (n > 0 && observer_.released) observer_.released(reason, n);
}

void GroupBook::index(const CommittedGroupPlan& plan, NameSet& dirty) {
  for (std::size_t i = 0; i < plan.plan.slots.size(); ++i) {
    if (!plan.held(i)) continue;
    const std::string& node = plan.plan.slots[i].node;
    holds_[node].push_back(SlotRef{plan.key, i});
    dirty.insert(node);
  }
}

void GroupBook::unindex(const CommittedGroupPlan& plan, NameSet& dirty) {
  for (const PlannedSlot& slot : plan.plan.slots) {
    const auto it = holds_.find(slot.node);
    if (it == holds_.end()) continue;
    std::erase_if(it->second, [&](const SlotRef& ref) { return ref.key == plan.key; });
    dirty.insert(slot.node);
    if (it->second.empty()) holds_.erase(it);
  }
}

void GroupBook::setPlan(Group& group, std::shared_ptr<CommittedGroupPlan> plan, NameSet& dirty) {
  if (group.plan) unindex(*group.plan, dirty);
  group.plan = std::move(plan);
  if (group.plan) index(*group.plan, dirty);
  changed_ = true;
}

std::set<std::string> GroupBook::takeMembersChanged() {
  return std::exchange(membersChanged_, {});
}

void GroupBook::touchMember(const std::string& uid) {
  if (const auto key = keyOf_.find(uid); key != keyOf_.end()) membersChanged_.insert(key->second);
}

GroupBook::Group& GroupBook::filed(const std::string& uid, const std::string& key) {
  if (const auto before = keyOf_.find(uid); before != keyOf_.end() && before->second != key) {
    membersChanged_.insert(before->second);
  }
  membersChanged_.insert(key);
  keyOf_[uid] = key;
  return groups_[key];
}

void GroupBook::memberPending(const std::string& uid, const std::string& key) {
  Group& group = filed(uid, key);
  group.placed.erase(uid);
  group.nominated.erase(uid);
  group.pending.insert(uid);
}

void GroupBook::memberNominated(const std::string& uid, const std::string& key,
                                const std::string& node) {
  Group& group = filed(uid, key);
  group.placed.erase(uid);
  group.pending.erase(uid);
  group.nominated[uid] = node;
}

void GroupBook::memberPlaced(const std::string& uid, const std::string& key,
                             const std::string& node, const Allocation* allocation,
                             const PodDemand* demand, WallTime now, std::int64_t ttlMillis,
                             const std::function<GroupDomainIds(const std::string&)>& domainsOf,
                             NameSet& dirty) {
  Group& group = filed(uid, key);
  group.pending.erase(uid);
  group.nominated.erase(uid);
  group.placed[uid] = node;
  if (!group.firstPlaced) group.firstPlaced = now;
  if (!group.plan) return;
  const CommittedGroupPlan& current = *group.plan;
  std::optional<std::size_t> mine;
  const std::optional<std::size_t> pinned = current.pinOf(uid);
  std::optional<std::size_t> open;
  int openRank = -1;
  std::optional<std::size_t> sameGpus;
  for (std::size_t i = 0; i < current.plan.slots.size(); ++i) {
    if (current.claimedBy[i] == uid) mine = i;
    if (!current.held(i) || current.plan.slots[i].node != node) continue;
    // The member's own pinned slot first, then one of its shape pinned to no one, then one of its
    // shape, then any: another member's slot stays for it where the node has a choice.
    const bool shaped = demand != nullptr && current.heldForShape(i, *demand);
    const bool unpinned = current.pinnedUid(i).empty();
    const int rank = pinned == i ? 3 : (shaped && unpinned) ? 2 : shaped ? 1 : 0;
    if (rank > openRank) {
      open = i;
      openRank = rank;
    }
    if (allocation != nullptr && !sameGpus &&
        maskOf(current.plan.slots[i].allocation) == maskOf(*allocation)) {
      sameGpus = i;
    }
  }
  if (mine && current.plan.slots[*mine].node == node) return;  // already claimed here
  auto next = std::make_shared<CommittedGroupPlan>(current);
  next->pinnedTo.resize(next->plan.slots.size());
  if (mine) next->claimedBy[*mine].clear();  // claimed elsewhere before: held again
  if (const auto slot = sameGpus ? sameGpus : open) {
    next->claimedBy[*slot] = uid;
    if (allocation != nullptr) next->plan.slots[*slot].allocation = *allocation;
    // The member whose pin it took is pinned to the slot this member leaves, if any: the plan
    // still holds one slot for it.
    std::string displaced = std::exchange(next->pinnedTo[*slot], std::string());
    if (pinned && *pinned != *slot) {
      next->pinnedTo[*pinned] = displaced == uid ? std::string() : std::move(displaced);
    }
    next->expires = now + millis(ttlMillis);
    count(HoldRelease::kClaimed, 1);
    setPlan(group, std::move(next), dirty);
    finishIfDone(group, now, domainsOf);
    return;
  }
  setPlan(group, std::move(next), dirty);
  // Placed outside the plan: the plan needs one slot fewer, the member's own if it had one.
  releaseOne(group, HoldRelease::kSurplus, dirty, uid);
}

void GroupBook::memberUnplaced(const std::string& uid, NameSet& dirty) {
  const auto key = keyOf_.find(uid);
  if (key == keyOf_.end()) return;
  Group* group = find(key->second);
  if (group == nullptr) return;
  membersChanged_.insert(key->second);
  group->placed.erase(uid);
  group->pending.insert(uid);
  if (!group->plan) return;
  const auto& claimed = group->plan->claimedBy;
  const auto at = std::find(claimed.begin(), claimed.end(), uid);
  if (at == claimed.end()) return;
  const auto slot = static_cast<std::size_t>(at - claimed.begin());
  auto next = std::make_shared<CommittedGroupPlan>(*group->plan);
  next->claimedBy[slot].clear();
  pinTo(*next, slot, uid);  // its slot is held for it again: the retry keeps its node
  setPlan(*group, std::move(next), dirty);
}

void GroupBook::memberGone(const std::string& uid, NameSet& dirty) {
  const auto key = keyOf_.find(uid);
  if (key == keyOf_.end()) return;
  const std::string groupKey = key->second;
  keyOf_.erase(key);
  membersChanged_.insert(groupKey);
  Group* group = find(groupKey);
  if (group == nullptr) return;
  const bool waited = group->pending.erase(uid) + group->nominated.erase(uid) > 0;
  group->placed.erase(uid);
  if (waited && group->plan) releaseOne(*group, HoldRelease::kDeleted, dirty, uid);
  dropIfEmpty(groupKey);
}

void GroupBook::releaseOne(Group& group, HoldRelease reason, NameSet& dirty, std::string_view uid) {
  if (!group.plan) return;
  const CommittedGroupPlan& current = *group.plan;
  // The member's own pinned slot, else the last held slot pinned to no one, else the last held:
  // the other waiting members keep the slots their filters were answered with.
  std::optional<std::size_t> slot = current.pinOf(uid);
  for (std::size_t i = current.claimedBy.size(); i-- > 0 && !slot;) {
    if (current.held(i) && current.pinnedUid(i).empty()) slot = i;
  }
  for (std::size_t i = current.claimedBy.size(); i-- > 0 && !slot;) {
    if (current.held(i)) slot = i;
  }
  if (!slot) return;
  auto next = std::make_shared<CommittedGroupPlan>(current);
  next->claimedBy[*slot] = std::string(kReleasedSlot);
  if (*slot < next->pinnedTo.size()) next->pinnedTo[*slot].clear();
  count(reason, 1);
  const bool done = next->heldCount() == 0;
  setPlan(group, done ? nullptr : std::move(next), dirty);
}

bool GroupBook::pin(std::string_view key, std::uint64_t sequence, std::size_t slot,
                    const std::string& uid) {
  Group* group = find(key);
  if (group == nullptr || !group->plan || group->plan->sequence != sequence || uid.empty()) {
    return false;
  }
  const CommittedGroupPlan& current = *group->plan;
  // A slot no longer held, or pinned already (to this member, or to another one first).
  if (!current.held(slot) || !current.pinnedUid(slot).empty()) return false;
  auto next = std::make_shared<CommittedGroupPlan>(current);
  pinTo(*next, slot, uid);
  // The holds stay where they are: only the published table changes.
  group->plan = std::move(next);
  changed_ = true;
  return true;
}

void GroupBook::finishIfDone(Group& group, WallTime now,
                             const std::function<GroupDomainIds(const std::string&)>& domainsOf) {
  if (!group.plan || group.plan->heldCount() > 0) return;
  const CommittedGroupPlan& plan = *group.plan;
  if (observer_.placed && domainsOf) {
    std::vector<GroupDomainIds> domains;
    for (const auto& [uid, node] : group.placed)
      domains.push_back(domainsOf(node));
    for (std::size_t level = 0; level < plan.levels.size() && level < kMaxGroupLevels; ++level) {
      if (plan.levels[level].mode == GroupLevelMode::kIgnored || domains.empty()) continue;
      const std::uint32_t first = domains.front()[level];
      const bool labelled = std::any_of(domains.begin(), domains.end(),
                                        [&](const auto& d) { return d[level] != kNoDomain; });
      if (!labelled) continue;  // the level does not apply to where the group went
      const bool whole = std::all_of(domains.begin(), domains.end(),
                                     [&](const auto& d) { return d[level] == first; });
      observer_.placed(plan.levels[level].label, whole);
    }
  }
  if (observer_.firstToLast && group.firstPlaced) {
    observer_.firstToLast(std::chrono::duration<double>(now - *group.firstPlaced).count());
  }
  NameSet none;
  setPlan(group, nullptr, none);
}

void GroupBook::dropIfEmpty(const std::string& key) {
  const auto it = groups_.find(key);
  if (it != groups_.end() && it->second.placed.empty() && it->second.pending.empty() &&
      it->second.nominated.empty() && !it->second.plan) {
    groups_.erase(it);
  }
}

const CommittedGroupPlan* GroupBook::plan(std::string_view key) const {
  const Group* group = find(key);
  return group == nullptr ? nullptr : group->plan.get();
}

std::vector<std::string> GroupBook::placedNodes(std::string_view key) const {
  std::vector<std::string> out;
  if (const Group* group = find(key)) {
    for (const auto& [uid, node] : group->placed)
      out.push_back(node);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> GroupBook::nominated(std::string_view key) const {
  std::vector<std::pair<std::string, std::string>> out;
  if (const Group* group = find(key)) out.assign(group->nominated.begin(), group->nominated.end());
  return out;
}

std::vector<std::string> GroupBook::waiting(std::string_view key) const {
  std::vector<std::string> out;
  if (const Group* group = find(key)) out.assign(group->pending.begin(), group->pending.end());
  return out;
}

bool GroupBook::placedMember(std::string_view key, std::string_view uid) const {
  const Group* group = find(key);
  return group != nullptr && group->placed.count(std::string(uid)) != 0;
}

void GroupBook::commit(CommittedGroupPlan plan, WallTime now, std::int64_t ttlMillis,
                       NameSet& dirty) {
  Group& group = groups_[plan.key];
  if (group.plan) return;
  plan.sequence = ++sequence_;
  plan.claimedBy.assign(plan.plan.slots.size(), std::string());
  plan.pinnedTo.assign(plan.plan.slots.size(), std::string());
  plan.expires = now + millis(ttlMillis);
  setPlan(group, std::make_shared<CommittedGroupPlan>(std::move(plan)), dirty);
}

std::size_t GroupBook::expire(WallTime now, NameSet& dirty) {
  std::size_t released = 0;
  std::vector<std::string> emptied;
  for (auto& [key, group] : groups_) {
    if (!group.plan || group.plan->expires > now) continue;
    const std::size_t held = group.plan->heldCount();
    released += held;
    count(HoldRelease::kExpired, held);
    setPlan(group, nullptr, dirty);
    emptied.push_back(key);
  }
  for (const std::string& key : emptied)
    dropIfEmpty(key);
  return released;
}

void GroupBook::releaseAll(HoldRelease reason, NameSet& dirty) {
  std::vector<std::string> emptied;
  for (auto& [key, group] : groups_) {
    if (!group.plan) continue;
    count(reason, group.plan->heldCount());
    setPlan(group, nullptr, dirty);
    emptied.push_back(key);
  }
  for (const std::string& key : emptied)
    dropIfEmpty(key);
}

std::size_t GroupBook::release(std::string_view key, HoldRelease reason, NameSet& dirty) {
  Group* group = find(key);
  if (group == nullptr || !group->plan) return 0;
  const std::size_t held = group->plan->heldCount();
  count(reason, held);
  setPlan(*group, nullptr, dirty);
  dropIfEmpty(std::string(key));
  return held;
}

std::vector<std::string> GroupBook::holdUids(std::string_view key, const std::string& node) const {
  std::vector<std::string> out;
  const auto it = holds_.find(node);
  if (it == holds_.end()) return out;
  for (const SlotRef& ref : it->second) {
    if (ref.key == key) out.push_back(holdChargeUid(ref.key, ref.slot));
  }
  return out;
}

void GroupBook::repair(const std::string& node, const NodeState& withoutHolds,
                       const Policy& policy) {
  const auto it = holds_.find(node);
  if (it == holds_.end()) return;
  std::vector<SlotRef>& refs = it->second;
  std::sort(refs.begin(), refs.end(), [this](const SlotRef& a, const SlotRef& b) {
    const std::uint64_t sa = find(a.key)->plan->sequence;
    const std::uint64_t sb = find(b.key)->plan->sequence;
    return sa != sb ? sa < sb : a.slot < b.slot;
  });
  GpuMask taken = 0;
  bool valid = true;
  for (const SlotRef& ref : refs) {
    const GpuMask gpus = maskOf(find(ref.key)->plan->plan.slots[ref.slot].allocation);
    if ((gpus & ~withoutHolds.freeMask) != 0 || (gpus & taken) != 0) valid = false;
    taken |= gpus;
  }
  if (valid) return;
  // New GPUs for every held slot here, in commit order; those that do not fit are released.
  std::vector<PodDemand> demands;
  for (const SlotRef& ref : refs) {
    const CommittedGroupPlan& plan = *find(ref.key)->plan;
    demands.push_back(plan.demands[plan.plan.slots[ref.slot].member]);
  }
  const std::vector<Allocation> sets = groupSlotSets(withoutHolds, demands, policy);
  std::map<std::string, std::shared_ptr<CommittedGroupPlan>> changed;
  std::vector<SlotRef> kept;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    auto& next = changed[refs[i].key];
    if (!next) next = std::make_shared<CommittedGroupPlan>(*find(refs[i].key)->plan);
    if (i < sets.size()) {
      next->plan.slots[refs[i].slot].allocation = sets[i];
      kept.push_back(refs[i]);
    } else {
      next->claimedBy[refs[i].slot] = std::string(kReleasedSlot);
      count(HoldRelease::kDisplaced, 1);
    }
  }
  refs = std::move(kept);
  if (refs.empty()) holds_.erase(it);
  for (auto& [key, next] : changed) {
    Group& group = *find(key);
    // Only this node's slots changed: the other nodes' holds stay indexed as they are.
    if (next->heldCount() == 0) {
      NameSet others;
      setPlan(group, nullptr, others);
    } else {
      group.plan = std::move(next);
    }
  }
  changed_ = true;
}

void GroupBook::addHolds(const std::string& node, NodeCharges& charges) const {
  const auto it = holds_.find(node);
  if (it == holds_.end()) return;
  for (const SlotRef& ref : it->second) {
    const CommittedGroupPlan& plan = *find(ref.key)->plan;
    charges.put(
        PodCharge{holdChargeUid(ref.key, ref.slot), true, plan.plan.slots[ref.slot].allocation, 0});
  }
}

GroupPlanTableConstSharedPtr GroupBook::table() {
  if (changed_ || !published_) {
    auto table = std::make_shared<GroupPlanTable>();
    for (const auto& [key, group] : groups_) {
      if (group.plan) table->emplace(key, group.plan);
    }
    published_ = std::move(table);
    changed_ = false;
  }
  return published_;
}

std::size_t GroupBook::heldSlots() const noexcept {
  std::size_t n = 0;
  for (const auto& [node, refs] : holds_)
    n += refs.size();
  return n;
}

}  // namespace gte::cluster
