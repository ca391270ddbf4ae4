#pragma once
// Marks what pods hold: whole GPUs (`used` = 1) and MIG instances (token state `u`). Usage comes
// from the kubelet's PodResources API as device ids, or from `--used` for tests and dry runs.
#include <string>
#include <string_view>
#include <vector>

#include "agent/discovery.h"
#include "base/result.h"

namespace gte::agent {

// `bits` has one character per GPU: '0' free, '1' allocated whole; 'm' (or '0') for a GPU in MIG
// mode. A '1' on a MIG-enabled GPU, a wrong length or another character is an error.
Status applyUsedBits(Discovery& discovery, std::string_view bits);

// Device ids as the device plugin reports them to the kubelet: GPU UUIDs ("GPU-..."), MIG device
// UUIDs ("MIG-...") or GPU indices ("3"). Returns the ids that matched nothing on this node (the
// caller logs them: a stale allocation or another resource's device).
std::vector<std::string> applyDeviceIds(Discovery& discovery, const std::vector<std::string>& ids);

}  // namespace gte::agent
