#pragma once
// The openb trace format (Alibaba cluster-trace-gpu-v2023, as used by the FGD paper): pod lists
// `name,cpu_milli,memory_mib,num_gpu,gpu_milli[,...]` and node lists
// `sn,cpu_milli,memory_mib,gpu,model`. Columns are found by header name, so the timestamped
// `default` list reads too. Pure text in, values out.
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sim/sim_pod.h"

namespace gte::sim {

// A fractional GPU (gpu_milli < 1000 with num_gpu 1) is one whole GPU: nvidia.com/gpu cannot share.
Result<std::vector<SimPod>> parseOpenbPods(std::string_view csv);

// Nodes by GPU count: 8-GPU nodes become `eightGpu`, 4 `pcie4`, 2 `pcie2`, 1 `pcie1`; CPU-only
// nodes (0 GPUs) are skipped (GPU pods never land there). CPU and memory as listed.
Result<std::vector<SimNodeSpec>> parseOpenbNodes(std::string_view csv,
                                                 const NodeTemplate& eightGpu);

}  // namespace gte::sim
