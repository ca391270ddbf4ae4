#pragma once
// A simulated cluster from a short description: "hgx-a100:16,pcie2:32,pcie4:8" (built-in
// template names and counts). Nodes get the template's CPU and memory and names
// "<template>-<i>". "<template>:<count>/<per rack>" puts the nodes in racks of that many (the last
// one may be short), each rack a topology domain (rack_labels.h); templates that come in racks
// (gb200: 18 trays to an NVL72 rack, hgx-h100: 8) are racked by default, "/0" leaves them out.
// Racks are numbered in order across the whole description.
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sim/sim_pod.h"

namespace gte::sim {

Result<std::vector<SimNodeSpec>> parseClusterSpec(std::string_view text);

}  // namespace gte::sim
