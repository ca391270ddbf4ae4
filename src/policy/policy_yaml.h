#pragma once
// Reads a policy from YAML (config/scheduler-policy.yaml documents every key). Absent keys keep
// their defaults; unknown keys and out-of-range values are errors naming the key path, e.g.
// "weights.linkQuality: must be >= 0" or "mig.products[1].profiles[2].starts[0]: ...".
#include <string_view>

#include "base/result.h"
#include "policy/policy.h"

namespace gte {

// A key given twice in one mapping is an error too ("weights.packing: given twice in the same
// mapping"). An empty document (nothing, whitespace or comments) is the default policy.
Result<Policy> parsePolicyYaml(std::string_view text);

// The text is an empty YAML document: it sets nothing. The policy store refuses such a file (an
// emptied ConfigMap, or a file caught half-written) rather than fall back to the defaults.
bool isBlankPolicy(std::string_view text);

}  // namespace gte
