#include "sim/template_nodes.h"

#include <algorithm>
#include <map>
#include <random>
#include <utility>

namespace gte::sim {

namespace {

// The whole GPUs a node's slice lists, in the driver's order: GPUs in MIG mode are not whole-GPU
// devices.
std::vector<int> sliceOrder(const NodeTemplate& machine, DraDeviceOrder order,
                            std::mt19937_64& rng) {
  std::vector<int> gpus;
  for (int gpu = 0; gpu < machine.gpus; ++gpu) {
    const auto g = static_cast<std::size_t>(gpu);
    if (g >= machine.mig.size() || machine.mig[g] != '1') {
      gpus.push_back(gpu);
    }
  }
  if (order == DraDeviceOrder::kShuffled) {
    std::shuffle(gpus.begin(), gpus.end(), rng);
  }
  return gpus;
}

}  // namespace

TemplateNodes templateEngineNodes(std::span<const SimNodeSpec> cluster, const Policy& policy,
                                  SimDraCluster* dra, const SimOptions& options) {
  std::mt19937_64 orderRng(options.seed ^ 0x9e3779b97f4a7c15ULL);
  std::map<const NodeTemplate*, std::pair<NodeStateConstSharedPtr, NodeStateConstSharedPtr>>
      templates;
  TemplateNodes out;
  out.nodes.reserve(cluster.size());
  for (const SimNodeSpec& spec : cluster) {
    auto& shared = templates[spec.machine];
    if (shared.first == nullptr) {
      const NodeInfo info =
          dra != nullptr
              ? makeDraTemplateNode(*spec.machine, spec.machine->name, policy.labelPrefix)
              : makeTemplateNode(*spec.machine, spec.machine->name, policy.labelPrefix);
      shared.first = readNodeState(info, policy);
      shared.second = rebuildNodeState(*shared.first, NodeUsage{}, policy);
      out.labels.push_back(shared.first);
    }
    out.nodes.push_back(EngineNode{
        spec.name, spec.cpuMilli, spec.memoryMib, shared.first.get(), shared.second, {}, 0, 0, {}});
    if (dra != nullptr) {
      dra->publish(*spec.machine, spec.name, sliceOrder(*spec.machine, options.draOrder, orderRng));
      EngineNode& node = out.nodes.back();
      node.draNode = makeDraTemplateNode(*spec.machine, spec.name, policy.labelPrefix);
      node.state = chargeNodeState(*shared.first, nullptr, policy,
                                   dra->nodeState(node.draNode, shared.first->topology));
    }
    const NodeState& empty = *out.nodes.back().state;
    out.capacityGpus += empty.usableCount;
    out.capacitySlices += static_cast<std::int64_t>(empty.gpuCount) * kMigMemorySlices;
    out.capacityMigSlices += empty.migSlicesTotal;
  }
  return out;
}

}  // namespace gte::sim
