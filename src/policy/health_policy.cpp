#include "policy/policy.h"

namespace gte {

std::string_view degradedGpusName(DegradedGpus mode) noexcept {
  return mode == DegradedGpus::kRefuse ? "refuse" : "avoid";
}

std::optional<DegradedGpus> degradedGpusFromName(std::string_view name) noexcept {
  if (name == "avoid") return DegradedGpus::kAvoid;
  if (name == "refuse") return DegradedGpus::kRefuse;
  return std::nullopt;
}

std::string_view degradedLinksName(DegradedLinks mode) noexcept {
  return mode == DegradedLinks::kIgnore ? "ignore" : "avoid";
}

std::optional<DegradedLinks> degradedLinksFromName(std::string_view name) noexcept {
  if (name == "avoid") return DegradedLinks::kAvoid;
  if (name == "ignore") return DegradedLinks::kIgnore;
  return std::nullopt;
}

}  // namespace gte
