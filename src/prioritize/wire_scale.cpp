#include "prioritize/wire_scale.h"

#include <algorithm>

#include "core/score_node.h"

namespace gte {
namespace {

// The gap between the best link class and the rest, in wire steps.
constexpr int kLinkGap = 2;

}  // namespace

std::vector<int> wireScores(std::span<const RankedScore> candidates, bool linkFirst) {
  std::vector<int> wire(candidates.size(), 0);
  int bestLink = -2;
  bool anyFits = false;
  for (const RankedScore& c : candidates) {
    if (c.fits) {
      anyFits = true;
      bestLink = std::max(bestLink, linkFirst ? c.linkQuality : -1);
    }
  }
  if (!anyFits) {
    return wire;
  }
  bool weakerLinkFits = false;
  int low = kMaxNodeScore;
  int high = 0;
  for (const RankedScore& c : candidates) {
    if (!c.fits) {
      continue;
    }
    if (linkFirst && c.linkQuality != bestLink) {
      weakerLinkFits = true;
      continue;
    }
    low = std::min(low, c.score);
    high = std::max(high, c.score);
  }
  const int bottom = weakerLinkFits ? kLinkGap : 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const RankedScore& c = candidates[i];
    if (!c.fits || (linkFirst && c.linkQuality != bestLink)) {
      continue;
    }
    if (high == low) {
      wire[i] = kMaxExtenderScore;
      continue;
    }
    const int span = kMaxExtenderScore - bottom;
    wire[i] = bottom + (span * (c.score - low) * 2 + (high - low)) / ((high - low) * 2);
  }
  return wire;
}

}  // namespace gte
