#include "core/scarce_sets.h"

#include <algorithm>

namespace gte {

ScarceSets countScarceSets(std::span<const NodeCandidate> nodes) noexcept {
  ScarceSets sets;
  for (const NodeCandidate& node : nodes) {
    if (node.state != nullptr) sets.add(*node.state);
  }
  return sets;
}

int scarceSetPoints(std::uint8_t broken, const ScarceSets& sets, int points) noexcept {
  if (broken == 0 || points <= 0) return 0;
  // In thousandths of a point, so a tenth of the last set's cost still counts before rounding.
  std::int64_t milli = 0;
  for (std::size_t i = 0; i < kScarceSetSizes.size(); ++i) {
    // A node that breaks a set holds one, so the count is at least 1 where the counts include
    // it; counts taken elsewhere (a stale or partial view) never divide by zero.
    if ((broken >> i & 1U) != 0)
      milli += std::int64_t{points} * 1000 / std::max<std::int64_t>(1, sets.holders[i]);
  }
  return static_cast<int>(std::min<std::int64_t>(points, (milli + 500) / 1000));
}

}  // namespace gte
