#include "policy/policy.h"

namespace gte {

std::string_view isolationName(Isolation isolation) noexcept {
  return isolation == Isolation::kExclusive ? "exclusive" : "shared";
}

std::optional<Isolation> isolationFromName(std::string_view name) noexcept {
  if (name == "exclusive") return Isolation::kExclusive;
  if (name == "shared") return Isolation::kShared;
  return std::nullopt;
}

std::string_view sharedPlacementName(SharedPlacement placement) noexcept {
  return placement == SharedPlacement::kPack ? "pack" : "spread";
}

std::optional<SharedPlacement> sharedPlacementFromName(std::string_view name) noexcept {
  if (name == "spread") return SharedPlacement::kSpread;
  if (name == "pack") return SharedPlacement::kPack;
  return std::nullopt;
}

}  // namespace gte
