#include "sim/rack_labels.h"

#include <cstdio>
#include <string>

namespace gte::sim {

StringMap rackLabels(const NodeTemplate& machine, int rack) {
  StringMap labels;
  labels[std::string(kBlockLabel)] = "leaf-" + std::to_string(rack);
  if (machine.rackNvlink) {
    // A version-4 UUID shape whose last group is the rack number; clique 1 of that domain.
    char uuid[40];
    std::snprintf(uuid, sizeof uuid, "6c1f0e2a-9b3d-4e57-8a10-%012d", rack);
    labels[std::string(kCliqueLabel)] = std::string(uuid) + ".1";
  }
  return labels;
}

}  // namespace gte::sim
