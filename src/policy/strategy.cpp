#include "policy/policy.h"

namespace gte {

std::string_view strategyName(Strategy strategy) noexcept {
  return strategy == Strategy::kSpread ? "spread" : "binpack";
}

std::optional<Strategy> strategyFromName(std::string_view name) noexcept {
  if (name == "binpack") {
    return Strategy::kBinpack;
  }
  if (name == "spread") {
    return Strategy::kSpread;
  }
  return std::nullopt;
}

}  // namespace gte
