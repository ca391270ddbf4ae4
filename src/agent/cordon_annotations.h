#pragma once
// The operator's cordons (docs/agent.md, Health): Node annotations `<prefix>cordoned-gpus`
// ("3,5": GPU indices) and `<prefix>cordoned-links` ("0-1,2-3": GPU pairs), read from the Node the
// agent GETs before each write and never written by the agent (kubectl gpu-topology
// cordon-gpu|cordon-link edits them). A cordoned GPU is published `c`, a cordoned pair `c` in
// `nvlh`; a cordon beats every other state. A malformed entry is reported and skipped; the valid
// ones still apply.
#include <string>
#include <utility>
#include <vector>

#include "model/string_map.h"
#include "topology/gpu_topology.h"

namespace gte::agent {

struct Cordons {
  std::vector<int> gpus;
  std::vector<std::pair<int, int>> links;  // i < j
  std::vector<std::string> errors;         // one per malformed entry
};

// `annotations` of the Node; `gpuCount` bounds the indices.
Cordons parseCordons(const StringMap& annotations, const std::string& prefix, int gpuCount);

// Marks the cordoned GPUs and pairs in `topology` (linkHealth is filled with `1` first when it
// was empty and a pair is cordoned).
void applyCordons(const Cordons& cordons, GpuTopology& topology);

}  // namespace gte::agent
