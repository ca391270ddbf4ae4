#pragma once
// One pod of a simulated workload and one node of a simulated cluster, as the trace gives them.
#include <cstdint>
#include <string>

#include "sim/node_template.h"

namespace gte::sim {

struct SimPod {
  std::string name;
  std::int64_t cpuMilli = 0;
  std::int64_t memoryMib = 0;
  int gpus = 0;  // whole GPUs (a trace's fractional GPU counts as one whole GPU)
};

struct SimNodeSpec {
  std::string name;
  const NodeTemplate* machine = nullptr;  // a built-in template (static lifetime)
  std::int64_t cpuMilli = 0;
  std::int64_t memoryMib = 0;
};

}  // namespace gte::sim
