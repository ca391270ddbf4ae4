#include "group/member_pin.h"

#include <algorithm>
#include <vector>

namespace gte {

std::optional<std::size_t> pinnedSlot(const CommittedGroupPlan& plan, const PodDemand& demand,
                                      PinCandidate self, std::span<const PinCandidate> waiting) {
  if (const auto mine = plan.pinOf(self.uid); mine && plan.heldForShape(*mine, demand)) {
    return mine;
  }
  // The members not pinned yet, this one among them, rank for the slots not pinned yet. The
  // pinned UIDs are sorted once: a group may have thousands of members, each checked against them.
  std::vector<std::string_view> pinned;
  for (std::size_t slot = 0; slot < plan.plan.slots.size(); ++slot) {
    if (const std::string_view uid = plan.pinnedUid(slot); !uid.empty()) pinned.push_back(uid);
  }
  std::sort(pinned.begin(), pinned.end());
  std::vector<std::string_view> names;
  names.reserve(waiting.size() + 1);
  for (const PinCandidate& other : waiting) {
    if (other.uid.empty() || !std::binary_search(pinned.begin(), pinned.end(), other.uid)) {
      names.push_back(other.name);
    }
  }
  names.push_back(self.name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  const auto rank = static_cast<std::size_t>(
      std::lower_bound(names.begin(), names.end(), self.name) - names.begin());
  std::size_t seen = 0;
  for (std::size_t slot = 0; slot < plan.plan.slots.size(); ++slot) {
    if (!plan.heldForShape(slot, demand) || !plan.pinnedUid(slot).empty()) continue;
    if (seen == rank) return slot;
    ++seen;
  }
  return std::nullopt;
}

}  // namespace gte
