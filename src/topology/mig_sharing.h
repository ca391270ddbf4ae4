#pragma once
// The MIG profiles whose devices the NVIDIA device plugin shares (GPU Feature Discovery's
// nvidia.com/mig-<profile>.sharing-strategy / .replicas, model/gpu_sharing.h), keyed by their
// labels-v1 profile code: what the node agent writes a shared device's tenants against and the
// extender counts its free replicas from (docs/sharing.md#mig-devices-shared). Pure.
#include <map>
#include <span>

#include "model/gpu_sharing.h"
#include "policy/mig_product.h"

namespace gte {

// Replicas per device, by profile code.
using MigReplicas = std::map<char, int>;

// The shared profiles `product` knows whose replica count is above 1; the others are left out (a
// device of theirs with a tenant reads used).
MigReplicas migReplicasByCode(std::span<const SharedMigProfile> shared, const MigProduct& product);

}  // namespace gte
