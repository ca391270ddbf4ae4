#pragma once
// The topology-domain labels a simulated node carries beside labels-v1, as the cluster's own
// labellers would set them: NVIDIA GPU Feature Discovery writes `nvidia.com/gpu.clique`
// (`<ClusterUUID>.<CliqueId>`, one value per multi-node NVLink domain: every tray of a GB200
// NVL72 rack) and NVIDIA Topograph `network.topology.nvidia.com/block` (the leaf switch, one per
// rack here). Nodes in no rack carry neither; `network.topology.nvidia.com/accelerator` is left
// unset, as Topograph leaves it on nodes that have a clique label.
#include <string_view>

#include "model/string_map.h"
#include "sim/node_template.h"

namespace gte::sim {

inline constexpr std::string_view kCliqueLabel = "nvidia.com/gpu.clique";
inline constexpr std::string_view kAcceleratorLabel = "network.topology.nvidia.com/accelerator";
inline constexpr std::string_view kBlockLabel = "network.topology.nvidia.com/block";

// The labels of every node of rack `rack` (numbered from 0 across the cluster) built from
// `machine`: the block, and the clique when the rack is one NVLink domain. Deterministic: the
// clique's cluster UUID is derived from the rack number.
StringMap rackLabels(const NodeTemplate& machine, int rack);

}  // namespace gte::sim
