#pragma once
// The machines a simulated cluster is made of, as the node agent would label them (labels-v1), so
// the simulator decides on exactly the NodeInfo a real node publishes. The link strings follow real
// captures: an HGX/DGX A100 (NVSwitch), a DGX-1V (hybrid cube-mesh), PCIe-only T4 boxes, a DGX
// H100 (NVSwitch, NV18) and a GB200 compute tray (4 GPUs, NV18; 18 trays to an NVL72 rack). The
// MIG templates are A100-80GB machines with MIG mode on for some or all GPUs, either with no GPU
// instance created yet (the MIG manager creates the one the scheduler places: policy
// `mig.dynamic`) or with a static layout a MIG manager created ahead of time. The shared templates
// are inference pools whose device plugin time-slices (a DGX H100, 4 replicas per GPU) or runs MPS
// (the T4 box, 2 replicas per GPU).
#include <span>
#include <string>
#include <string_view>

#include "model/node_info.h"

namespace gte::sim {

struct NodeTemplate {
  std::string name;  // "hgx-a100", "dgx1v", "pcie2", "pcie4", "pcie1", "hgx-a100-mig", ...
  int gpus = 0;
  std::string model;   // labels-v1 `model`
  std::string fabric;  // labels-v1 `fabric`
  std::string nvl;     // labels-v1 pair strings (n(n-1)/2 characters)
  std::string pci;
  std::string numa;           // one character per GPU
  std::int64_t cpuMilli = 0;  // default capacity when the cluster description gives none
  std::int64_t memoryMib = 0;
  std::string mig;        // labels-v1 `mig`, one character per GPU: `n`, `0` or `1` (MIG enabled)
  std::string migLayout;  // labels-v1 `mig<i>` tokens (all free) of every MIG GPU; "" for none
  // Racks: nodes per rack when the cluster description gives none (0: not racked), and whether
  // the rack is one multi-node NVLink domain (GB200 NVL72: GPU Feature Discovery labels every
  // tray of the rack with the same `nvidia.com/gpu.clique`).
  int rackNodes = 0;
  bool rackNvlink = false;
  // The NVIDIA device plugin shares every GPU (docs/sharing.md): GPU Feature Discovery's
  // `nvidia.com/gpu.sharing-strategy` ("time-slicing", "mps"; empty: whole GPUs) and
  // `nvidia.com/gpu.replicas`, with allocatable nvidia.com/gpu = whole GPUs x replicas.
  std::string sharing{};
  int replicas = 0;

  int migGpus() const noexcept;  // GPUs with MIG mode on
  int wholeGpus() const noexcept { return gpus - migGpus(); }
  // What nvidia.com/gpu counts: the whole GPUs, times their replicas where they are shared.
  int advertisedGpus() const noexcept { return wholeGpus() * (sharing.empty() ? 1 : replicas); }
};

std::span<const NodeTemplate> builtinNodeTemplates();

// nullptr when no built-in template has that name.
const NodeTemplate* findNodeTemplate(std::string_view name);

// A labels-v1 node of this template with every GPU healthy and free (MIG GPUs with the template's
// layout, all instances free), allocatable nvidia.com/gpu the GPUs not in MIG mode.
NodeInfo makeTemplateNode(const NodeTemplate& machine, const std::string& nodeName,
                          const std::string& labelPrefix);

}  // namespace gte::sim
