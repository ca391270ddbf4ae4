#pragma once
// Reads a node's GPU topology from its labels (docs/labels.md). With a `<prefix>v` label every
// labels-v1 key is checked and any malformation is an Error naming the node and the key; links
// are never guessed. Without one, NVIDIA GPU Feature Discovery labels and status.allocatable give
// GPU and MIG device counts with unknown links; a node with neither has no GPUs.
#include "base/result.h"
#include "model/node_info.h"
#include "policy/policy.h"
#include "topology/gpu_topology.h"

namespace gte {

// Whether the node carries labels-v1: a `<prefix>v` label, whatever its value and the other keys.
bool hasLabelsV1(const NodeInfo& node, const Policy& policy);

// readLabelsV1 when hasLabelsV1, else readFallbackTopology.
Result<GpuTopology> readTopology(const NodeInfo& node, const Policy& policy);

// labels-v1 only. Errors read "node <name>: <prefix><key>: <what is wrong>".
Result<GpuTopology> readLabelsV1(const NodeInfo& node, const Policy& policy);

// GPU Feature Discovery (`nvidia.com/gpu.count`, `nvidia.com/gpu.product`,
// `nvidia.com/mig-<profile>.count`) and allocatable (`nvidia.com/gpu`, `nvidia.com/mig-<profile>`).
// Used when labels-v1 are absent, and for counts when they are malformed.
Result<GpuTopology> readFallbackTopology(const NodeInfo& node);

}  // namespace gte
