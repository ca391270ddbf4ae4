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

}  // namespace gte
