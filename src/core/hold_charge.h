#pragma once
// A pod group's held slot is charged on its node like a reservation (group/committed_group_plan.h,
// docs/groups.md#holds), under the UID "hold/<group key>/<slot index>": requests of other pods see
// its GPUs as taken, and the node's charges (core/node_charges.h) tell holds from pods by it.
#include <cstddef>
#include <string>
#include <string_view>

namespace gte {

inline constexpr std::string_view kHoldChargePrefix = "hold/";

inline std::string holdChargeUid(std::string_view key, std::size_t slot) {
  return std::string(kHoldChargePrefix) + std::string(key) + "/" + std::to_string(slot);
}

// The group key a charge holds GPUs for; empty for a pod's charge.
inline std::string_view heldFor(std::string_view chargeUid) noexcept {
  if (!chargeUid.starts_with(kHoldChargePrefix)) return {};
  const std::string_view rest = chargeUid.substr(kHoldChargePrefix.size());
  const std::size_t slash = rest.rfind('/');
  return slash == std::string_view::npos ? std::string_view{} : rest.substr(0, slash);
}

}  // namespace gte
