#pragma once
// The engine's nodes for a simulated cluster of built-in templates: one labels read and one empty
// state per template, shared by its nodes until a pod lands on them.
#include <cstdint>
#include <span>
#include <vector>

#include "core/node_state.h"
#include "policy/policy.h"
#include "sim/placement_engine.h"
#include "sim/sim_pod.h"

namespace gte::sim {

struct TemplateNodes {
  std::vector<EngineNode> nodes;  // one per cluster entry, in order; names point into `cluster`
  std::vector<NodeStateConstSharedPtr> labels;  // what the nodes' `labels` point to: keep alive
  std::int64_t capacityGpus = 0;                // whole GPUs (not in MIG mode)
  std::int64_t capacitySlices = 0;              // every GPU's memory slices, MIG or not
  std::int64_t capacityMigSlices = 0;           // memory slices of GPUs in MIG mode
};

// `cluster` must outlive the nodes (they name its entries). With `dra` (DRA mode,
// `options.draOrder` not kOff) the nodes carry labels as DRA nodes do (no allocatable
// nvidia.com/gpu), each node's slice is published to `dra` with its whole GPUs in the driver's
// order (`options.draOrder`, shuffled from a stream of `options.seed` of its own, so tie-breaking
// draws stay as without DRA), and each node's state is built from that slice.
TemplateNodes templateEngineNodes(std::span<const SimNodeSpec> cluster, const Policy& policy,
                                  SimDraCluster* dra = nullptr, const SimOptions& options = {});

}  // namespace gte::sim
