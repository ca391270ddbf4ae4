#pragma once
// Pods that ask for GPUs, for decision-core and HTTP tests.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/pod_info.h"

namespace gte::testing {

// A pending pod requesting `gpus` whole GPUs (nvidia.com/gpu), with optional annotations.
PodInfo makeGpuPod(const std::string& name, std::int64_t gpus,
                   const std::vector<std::pair<std::string, std::string>>& annotations = {});

// A pending pod requesting MIG instances: {{"3g.40gb", 1}, ...} as nvidia.com/mig-<profile>.
PodInfo makeMigPod(const std::string& name,
                   const std::vector<std::pair<std::string, std::int64_t>>& instances);

}  // namespace gte::testing
