#include "sim/template_nodes.h"

#include <map>
#include <utility>

namespace gte::sim {

TemplateNodes templateEngineNodes(std::span<const SimNodeSpec> cluster, const Policy& policy) {
  std::map<const NodeTemplate*, std::pair<NodeStateConstSharedPtr, NodeStateConstSharedPtr>>
      templates;
  TemplateNodes out;
  out.nodes.reserve(cluster.size());
  for (const SimNodeSpec& spec : cluster) {
    auto& shared = templates[spec.machine];
    if (shared.first == nullptr) {
      const NodeInfo info = makeTemplateNode(*spec.machine, spec.machine->name, policy.labelPrefix);
      shared.first = readNodeState(info, policy);
      shared.second = rebuildNodeState(*shared.first, NodeUsage{}, policy);
      out.labels.push_back(shared.first);
    }
    out.nodes.push_back(EngineNode{
        spec.name, spec.cpuMilli, spec.memoryMib, shared.first.get(), shared.second, {}, 0, 0});
    out.capacityGpus += shared.second->usableCount;
    out.capacitySlices += static_cast<std::int64_t>(shared.second->gpuCount) * kMigMemorySlices;
    out.capacityMigSlices += shared.second->migSlicesTotal;
  }
  return out;
}

}  // namespace gte::sim
