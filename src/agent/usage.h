#pragma once
// Marks what pods hold: whole GPUs (`used` = 1) and MIG instances (token state `u`). Usage comes
// from the kubelet's PodResources API as device ids, or from `--used` for tests and dry runs.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/discovery.h"
#include "base/result.h"
#include "model/string_map.h"
#include "policy/mig_product.h"
#include "topology/mig_sharing.h"

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

// The MIG profiles GPU Feature Discovery's labels on the node call shared (readMigSharing: the
// mixed MIG strategy), each named through the product table of `model`; profiles unknown to the
// table, or whose replica count is not known, are left out (their devices read used at a tenant).
MigReplicas sharedMigReplicas(const StringMap& nodeLabels, const std::vector<MigProduct>& products,
                              std::string_view model);

// Device ids as the device plugin reports them to the kubelet: GPU UUIDs ("GPU-..."), MIG device
// UUIDs ("MIG-...") or GPU indices ("3"), each possibly a replica id of a shared device. A whole
// GPU is marked used; a replica of a GPU counts one tenant of it (`tenants`, the GPU stays free:
// its other replicas are still offered). A MIG device's replicas leave its instance free while
// fewer are held than `migReplicas` gives its profile (another pod may still get one), counted in
// its `heldReplicas`, and mark it used once all are, or when its profile's replicas are not known.
// Returns the ids that matched nothing on this node (the caller logs them: a stale allocation or
// another resource's device).
std::vector<std::string> applyDeviceIds(Discovery& discovery, const std::vector<std::string>& ids,
                                        const MigReplicas& migReplicas = {});

}  // namespace gte::agent
