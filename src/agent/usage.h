#pragma once
// Marks what pods hold: whole GPUs (`used` = 1) and MIG instances (token state `u`). Usage comes
// from the kubelet's PodResources API as device ids, or from `--used` for tests and dry runs.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/discovery.h"
#include "base/result.h"

namespace gte::agent {

// `bits` has one character per GPU: '0' free, '1' allocated whole; 'm' (or '0') for a GPU in MIG
// mode. A '1' on a MIG-enabled GPU, a wrong length or another character is an error.
Status applyUsedBits(Discovery& discovery, std::string_view bits);

// A device id the device plugin gives a replica of a shared device (time-slicing, MPS):
// "<device id>::<replica number>", e.g. "GPU-8c5f...::2" (its AnnotatedID).
struct ReplicaId {
  std::string_view device;
  int replica = 0;
};
// nullopt when `id` is not a replica id (no "::", an empty device, a number that does not read).
std::optional<ReplicaId> splitReplicaId(std::string_view id) noexcept;

// Device ids as the device plugin reports them to the kubelet: GPU UUIDs ("GPU-..."), MIG device
// UUIDs ("MIG-...") or GPU indices ("3"), each possibly a replica id of a shared device. A whole
// GPU is marked used; a replica of a GPU counts one tenant of it (`tenants`, the GPU stays free:
// its other replicas are still offered), a replica of a MIG device marks its instance used.
// Returns the ids that matched nothing on this node (the caller logs them: a stale allocation or
// another resource's device).
std::vector<std::string> applyDeviceIds(Discovery& discovery, const std::vector<std::string>& ids);

}  // namespace gte::agent
