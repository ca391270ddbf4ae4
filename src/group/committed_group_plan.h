#pragma once
// A pod group's plan as the cluster cache committed it: the planner's answer, which member has
// claimed which slot, which waiting member each held slot is pinned to, and until when the
// unclaimed slots are held. Published immutable in every snapshot (ClusterSnapshot::groupPlans),
// so later members are answered from it without a lock. Plain data.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/hold_charge.h"
#include "core/pod_demand.h"
#include "group/group_plan.h"
#include "policy/group_levels.h"

namespace gte {

inline constexpr std::string_view kReleasedSlot = "-";

struct CommittedGroupPlan {
  std::string key;    // PodGroupRef::key
  std::string group;  // "namespace/name", for messages
  std::int64_t size = 0;
  std::vector<GroupLevel> levels;  // as planned (the first member's modes)
  std::vector<PodDemand> demands;  // the members planned; plan.slots[i].member indexes these
  GroupPlan plan;
  // Per slot of plan.slots: the UID of the member that took it, "" while it is held,
  // kReleasedSlot once it is given up (a member was deleted, or bound outside the plan).
  std::vector<std::string> claimedBy;
  // Per slot: the UID of the waiting member whose filter was answered with this slot's node
  // (group/member_pin.h), "" while none is; meaningful for held slots only. Empty (or shorter
  // than the slots) for a plan not committed: no slot is pinned.
  std::vector<std::string> pinnedTo;
  std::vector<std::string> anchors;               // nodes of members placed before the plan
  std::chrono::system_clock::time_point expires;  // unclaimed slots are released then
  std::uint64_t sequence = 0;                     // commit order

  bool held(std::size_t slot) const noexcept {
    return slot < claimedBy.size() && claimedBy[slot].empty();
  }
  bool claimed(std::size_t slot) const noexcept {
    return slot < claimedBy.size() && !claimedBy[slot].empty() && claimedBy[slot] != kReleasedSlot;
  }
  // A held slot planned for a member of `member`'s shape: its GPUs serve that member as planned.
  bool heldForShape(std::size_t slot, const PodDemand& member) const {
    return held(slot) && plan.slots[slot].member < demands.size() &&
           sameShape(demands[plan.slots[slot].member], member);
  }
  // The UID the held slot is pinned to, "" when none.
  std::string_view pinnedUid(std::size_t slot) const noexcept {
    return held(slot) && slot < pinnedTo.size() ? std::string_view(pinnedTo[slot])
                                                : std::string_view();
  }
  // The held slot pinned to `uid`, if any.
  std::optional<std::size_t> pinOf(std::string_view uid) const noexcept {
    if (uid.empty()) return std::nullopt;
    for (std::size_t i = 0; i < pinnedTo.size(); ++i) {
      if (pinnedTo[i] == uid && held(i)) return i;
    }
    return std::nullopt;
  }
  std::size_t heldCount() const noexcept {
    std::size_t n = 0;
    for (std::size_t i = 0; i < claimedBy.size(); ++i)
      n += held(i) ? 1 : 0;
    return n;
  }
};

using CommittedGroupPlanConstSharedPtr = std::shared_ptr<const CommittedGroupPlan>;
using GroupPlanTable = std::map<std::string, CommittedGroupPlanConstSharedPtr, std::less<>>;
using GroupPlanTableConstSharedPtr = std::shared_ptr<const GroupPlanTable>;

}  // namespace gte
