#include "group/member_pin.h"

#include <algorithm>
#include <vector>

namespace gte {

std::optional<std::size_t> pinnedSlot(const CommittedGroupPlan& plan, const PodDemand& demand,
                                      std::string_view name,
                                      std::span<const std::string> waitingNames) {
  std::vector<std::string_view> names(waitingNames.begin(), waitingNames.end());
  names.push_back(name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  const auto rank =
      static_cast<std::size_t>(std::lower_bound(names.begin(), names.end(), name) - names.begin());
  std::size_t seen = 0;
  for (std::size_t slot = 0; slot < plan.plan.slots.size(); ++slot) {
    if (!plan.heldForShape(slot, demand)) continue;
    if (seen == rank) return slot;
    ++seen;
  }
  return std::nullopt;
}

}  // namespace gte
