#include "sim/node_template.h"

#include <array>

#include "core/gpu_sharing.h"
#include "model/gpu_request.h"

namespace gte::sim {
namespace {

std::string repeat(std::size_t count, char c) {
  return std::string(count, c);
}

std::array<NodeTemplate, 13> makeTemplates() {
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
                   1048576,
                   repeat(8, 'n'),
                   ""};
  // DGX-1V: NV1/NV2 hybrid cube-mesh; every GPU lacks NVLink to three others.
  NodeTemplate dgx1v{"dgx1v",
                     8,
                     "Tesla-V100-SXM2-16GB",
                     "mesh",
                     "1122000210200200100001112212",
                     "PHHSSSSHHSSSSPSSSSSSSSPHHHHP",
                     "00001111",
                     80000,
                     524288,
                     repeat(8, 'n'),
                     ""};
  // PCIe-only T4 boxes: two GPUs under one PCIe switch; four as two PIX pairs on one host bridge.
  NodeTemplate pcie2{"pcie2", 2, "Tesla-T4", "none", "0", "P", "00", 64000, 262144, "nn", ""};
  NodeTemplate pcie4{"pcie4", 4,     "Tesla-T4", "none", "000000", "PHHHHP",
                     "0000",  96000, 393216,     "nnnn", ""};
  NodeTemplate pcie1{"pcie1", 1, "Tesla-T4", "none", "", "", "0", 32000, 131072, "n", ""};
  // The HGX A100 with MIG mode on for every GPU, or for GPUs 4-7 only (0-3 stay whole GPUs, an
  // NVLink quad), as operators split a node between training and inference.
  NodeTemplate hgxMig = hgx;
  hgxMig.name = "hgx-a100-mig";
  hgxMig.mig = repeat(8, '1');
  NodeTemplate hgxMig4 = hgx;
  hgxMig4.name = "hgx-a100-mig4";
  hgxMig4.mig = "00001111";
  // Every GPU in the `all-balanced` layout of NVIDIA's MIG manager for A100-80GB: two 1g.10gb,
  // one 2g.20gb, one 3g.40gb, placed as the driver fills slices from the top (3g at 4, 2g at 2,
  // 1g at 1 and 0).
  NodeTemplate hgxMigBalanced = hgxMig;
  hgxMigBalanced.name = "hgx-a100-mig-balanced";
  hgxMigBalanced.migLayout = "00f01f12f24f";
  // One A100 80GB PCIe card with MIG on: the smallest MIG machine, for worked examples.
  NodeTemplate a100PcieMig{
      "a100-pcie-mig", 1, "NVIDIA-A100-80GB-PCIe", "none", "", "", "0", 32000, 131072, "1", ""};
  // DGX H100: NV18 between every pair through 4 NVSwitches, each GPU behind its own PCIe switch
  // (NODE inside a socket, SYS across), NUMA 0 for GPUs 0-3 and 1 for 4-7; 2x 56 cores (224
  // threads), 2 TiB. Racked 8 to a rack (one leaf switch) unless the description says otherwise.
  NodeTemplate hgxH100{"hgx-h100",
                       8,
                       "NVIDIA-H100-80GB-HBM3",
                       "nvsw4",
                       repeat(28, 'i'),
                       "NNNSSSSNNSSSSNSSSSSSSSNNNNNN",
                       "00001111",
                       224000,
                       2097152,
                       repeat(8, '0'),
                       "",
                       8,
                       false};
  // GB200 compute tray as `nvidia-smi topo -m` shows it
  // (tests/data/topologies/gb200-tray-nv18.topo): 4 GPUs, NV18 between every pair (the rack's
  // NVLink switch trays), no PCIe level for NVLinked pairs (`U`), GPUs 0-1 on NUMA 0 and 2-3 on
  // NUMA 1 (two Grace CPUs, 144 cores, ~960 GiB). 18 trays make an NVL72 rack, one NVLink domain.
  NodeTemplate gb200{"gb200",
                     4,
                     "NVIDIA-GB200",
                     "nvsw",
                     repeat(6, 'i'),
                     repeat(6, 'U'),
                     "0011",
                     144000,
                     983040,
                     repeat(4, 'n'),
                     "",
                     18,
                     true};
  // Inference pools whose GPUs the device plugin shares (docs/sharing.md).
  NodeTemplate hgxH100Sliced = hgxH100;
  hgxH100Sliced.name = "hgx-h100-ts4";
  hgxH100Sliced.sharing = "time-slicing";
  hgxH100Sliced.replicas = 4;
  NodeTemplate pcie4Mps = pcie4;
  pcie4Mps.name = "pcie4-mps2";
  pcie4Mps.sharing = "mps";
  pcie4Mps.replicas = 2;
  return {hgx,         dgx1v,   pcie2, pcie4,         pcie1,   hgxMig, hgxMig4, hgxMigBalanced,
          a100PcieMig, hgxH100, gb200, hgxH100Sliced, pcie4Mps};
}

}  // namespace

std::span<const NodeTemplate> builtinNodeTemplates() {
  static const std::array<NodeTemplate, 13> templates = makeTemplates();
  return templates;
}

int NodeTemplate::migGpus() const noexcept {
  int count = 0;
  for (const char mode : mig) {
    count += mode == '1' ? 1 : 0;
  }
  return count;
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
  std::string used(n, '0');
  for (std::size_t gpu = 0; gpu < n && gpu < machine.mig.size(); ++gpu) {
    if (machine.mig[gpu] == '1') {
      used[gpu] = 'm';  // in MIG mode, the instances in `mig<i>` (no key: none yet)
      if (!machine.migLayout.empty()) {
        put("mig" + std::to_string(gpu), machine.migLayout);
      }
    }
  }
  put("used", used);
  put("mig", machine.mig);
  put("gen", "1");
  if (!machine.sharing.empty()) {
    node.labels[std::string(kSharingStrategyLabel)] = machine.sharing;
    node.labels[std::string(kSharingReplicasLabel)] = std::to_string(machine.replicas);
  }
  node.allocatable.set(std::string(kGpuResource), Quantity::fromUnits(machine.advertisedGpus()));
  return node;
}

}  // namespace gte::sim
