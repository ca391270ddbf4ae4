#pragma once
// How well connected a set of GPUs is, as placement regret compares sets: the weakest link class
// of its pairs and the bandwidth estimate of its weakest pair (topology/link_bandwidth.h). Filled
// for sets of two or more GPUs on nodes whose links are known; a single GPU has no pair.
#include <cstdint>

#include "policy/link_class.h"

namespace gte {

struct SetQuality {
  LinkClass weakest = LinkClass::kUnknown;
  std::uint16_t bandwidthGBps = 0;  // GB/s one way; 0: unknown or no pair
  // The set holds a GPU or link marked degraded that the health policy avoids
  // (health/degraded_hardware.h): placement regret names such a set's avoidance.
  bool avoided = false;

  bool known() const noexcept { return bandwidthGBps > 0; }
  friend bool operator==(const SetQuality&, const SetQuality&) = default;
};

}  // namespace gte
