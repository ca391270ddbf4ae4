#include "sim/node_template.h"

#include <array>

#include "model/gpu_request.h"

namespace gte::sim {
namespace {

std::string repeat(std::size_t count, char c) {
  return std::string(count, c);
}

std::array<NodeTemplate, 5> makeTemplates() {
  // HGX A100 8-GPU: NV12 between every pair through NVSwitch; pairs of GPUs share a PCIe switch
  // complex (PXB), NUMA 3,3,1,1,7,7,5,5 (AMD NPS4).
  NodeTemplate hgx{"hgx-a100",
                   8,
                   "NVIDIA-A100-SXM4-80GB",
                   "nvsw6",
                   repeat(28, 'c'),
                   "QSSSSSSSSSSSSQSSSSSSSSQSSSSQ",
                   "33117755",
                   128000,
                   1048576};
  // DGX-1V: NV1/NV2 hybrid cube-mesh; every GPU lacks NVLink to three others.
  NodeTemplate dgx1v{"dgx1v",
                     8,
                     "Tesla-V100-SXM2-16GB",
                     "mesh",
                     "1122000210200200100001112212",
                     "PHHSSSSHHSSSSPSSSSSSSSPHHHHP",
                     "00001111",
                     80000,
                     524288};
  // PCIe-only T4 boxes: two GPUs under one PCIe switch; four as two PIX pairs on one host bridge.
  NodeTemplate pcie2{"pcie2", 2, "Tesla-T4", "none", "0", "P", "00", 64000, 262144};
  NodeTemplate pcie4{"pcie4", 4, "Tesla-T4", "none", "000000", "PHHHHP", "0000", 96000, 393216};
  NodeTemplate pcie1{"pcie1", 1, "Tesla-T4", "none", "", "", "0", 32000, 131072};
  return {hgx, dgx1v, pcie2, pcie4, pcie1};
}

}  // namespace

std::span<const NodeTemplate> builtinNodeTemplates() {
  static const std::array<NodeTemplate, 5> templates = makeTemplates();
  return templates;
}

const NodeTemplate* findNodeTemplate(std::string_view name) {
  for (const NodeTemplate& machine : builtinNodeTemplates()) {
    if (machine.name == name) {
      return &machine;
    }
  }
  return nullptr;
}

NodeInfo makeTemplateNode(const NodeTemplate& machine, const std::string& nodeName,
                          const std::string& labelPrefix) {
  NodeInfo node;
  node.name = nodeName;
  node.uid = "uid-" + nodeName;
  const auto n = static_cast<std::size_t>(machine.gpus);
  const auto put = [&](const std::string& key, const std::string& value) {
    node.labels[labelPrefix + key] = value;
  };
  put("v", "1");
  put("n", std::to_string(machine.gpus));
  put("model", machine.model);
  put("fabric", machine.fabric);
  put("nvl", machine.nvl);
  put("pci", machine.pci);
  put("numa", machine.numa);
  put("health", std::string(n, '1'));
  put("used", std::string(n, '0'));
  put("mig", std::string(n, 'n'));
  put("gen", "1");
  node.allocatable.set(std::string(kGpuResource), Quantity::fromUnits(machine.gpus));
  return node;
}

}  // namespace gte::sim
