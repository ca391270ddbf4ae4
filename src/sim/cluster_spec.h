#pragma once
// A simulated cluster from a short description: "hgx-a100:16,pcie2:32,pcie4:8" (built-in
// template names and counts). Nodes get the template's CPU and memory and names
// "<template>-<i>".
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sim/sim_pod.h"

namespace gte::sim {

Result<std::vector<SimNodeSpec>> parseClusterSpec(std::string_view text);

}  // namespace gte::sim
