#pragma once
// Whether a node's whole GPUs are shared among pods by the NVIDIA device plugin, read from what the
// plugin and GPU Feature Discovery publish (docs/sharing.md). With time-slicing or MPS the plugin
// advertises each physical GPU `replicas` times (allocatable nvidia.com/gpu = GPUs x replicas), and
// GFD labels the node `nvidia.com/gpu.sharing-strategy` (none | time-slicing | mps) and
// `nvidia.com/gpu.replicas`. A pod that asks for exclusive GPUs (`<prefix>isolation: exclusive`)
// must not land on such a node: its "GPUs" would be replicas beside other tenants, with no memory
// or fault isolation under time-slicing. A node whose sharing cannot be read is treated as shared,
// never as exclusive. Pure.
#include <cstdint>
#include <string_view>

#include "model/gpu_sharing.h"
#include "model/node_info.h"

namespace gte {

inline constexpr std::string_view kSharingStrategyLabel = "nvidia.com/gpu.sharing-strategy";
inline constexpr std::string_view kSharingReplicasLabel = "nvidia.com/gpu.replicas";

// The node's sharing of nvidia.com/gpu: from GFD's labels where they are present; without them,
// from the agent's `sharing` label (`labelPrefix` + kAgentSharingKey); without either, from its
// allocatable against its physical GPUs (`wholeGpus`, the GPUs not in MIG mode; `allocatable` -1
// when absent): more nvidia.com/gpu than GPUs is replication by an unknown strategy. A node with
// MIG-mode GPUs and no labels is read as not shared: under the plugin's `single` MIG strategy
// nvidia.com/gpu counts MIG devices, which are isolated. failRequestsGreaterThanOne comes from the
// agent's label alone, and only where its strategy is the one read.
GpuSharing readGpuSharing(const NodeInfo& node, std::string_view labelPrefix, int wholeGpus,
                          bool migModeGpus, std::int64_t allocatable);

}  // namespace gte
