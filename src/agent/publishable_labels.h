#pragma once
// The labels the agent publishes for one discovery: written with the extender's own codec, then
// read back with the extender's reader and checked against the Kubernetes label syntax. Anything
// the extender would call malformed is an error here, before it reaches the Node.
#include <cstdint>
#include <string>

#include "agent/discovery.h"
#include "base/result.h"
#include "model/string_map.h"
#include "policy/policy.h"

namespace gte::agent {

// `generation` becomes `gen` (unix seconds of the discovery).
Result<StringMap> publishableLabels(const Discovery& discovery, std::int64_t generation,
                                    const Policy& policy);

}  // namespace gte::agent
