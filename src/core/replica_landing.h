#pragma once
// Where a pod's replicas of shared GPUs land (docs/sharing.md). The NVIDIA device plugin's
// allocator for a replicated resource takes a pod's replicas one by one, each from the GPU with the
// fewest replicas in use (counting the ones it just took) among those with one left. The counts
// that gives per GPU are known except where GPUs tie at the last level: which of the tied GPUs
// take the last replicas the plugin's sort decides, in no order the extender can know. Pure.
#include <array>
#include <cstdint>

#include "core/node_state.h"

namespace gte {

struct ReplicaLanding {
  // Replicas each GPU takes whatever the tie-break.
  std::array<std::uint8_t, kMaxGpus> certain{};
  // The replicas left after those, one each on `undecided` of the `tied` GPUs.
  GpuMask tied = 0;
  int undecided = 0;
  // The node had fewer free replicas than asked: the rest land nowhere.
  int unplaced = 0;
};

// `k` replicas on the node's free GPUs as they stand (NodeState::tenants; the replica count per
// GPU bounds each, when known).
ReplicaLanding landReplicas(const NodeState& state, std::int64_t k);

}  // namespace gte
