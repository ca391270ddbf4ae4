#pragma once
// Reads a policy from YAML (config/scheduler-policy.yaml documents every key). Absent keys keep
// their defaults; unknown keys and out-of-range values are errors naming the key path, e.g.
// "weights.linkQuality: must be >= 0" or "mig.products[1].profiles[2].starts[0]: ...".
#include <string_view>

#include "base/result.h"
#include "policy/policy.h"

namespace gte {

Result<Policy> parsePolicyYaml(std::string_view text);

}  // namespace gte
