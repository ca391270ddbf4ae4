#pragma once
// One pod of a simulated workload and one node of a simulated cluster, as the trace gives them.
#include <cstdint>
#include <string>
#include <utility>

#include "model/string_map.h"
#include "policy/mig_product.h"
#include "sim/node_template.h"

namespace gte::sim {

struct SimPod {
  SimPod() = default;
  SimPod(std::string podName, std::int64_t cpu, std::int64_t memory, int wholeGpus,
         std::string mig = {}, int slices = 0)
      : name(std::move(podName)),
        cpuMilli(cpu),
        memoryMib(memory),
        gpus(wholeGpus),
        migProfile(std::move(mig)),
        migSlices(slices) {}

  std::string name;
  std::int64_t cpuMilli = 0;
  std::int64_t memoryMib = 0;
  int gpus = 0;  // whole GPUs (a trace's fractional GPU counts as one whole GPU)
  // One MIG instance of this profile ("3g.40gb"), or none; a pod asks for whole GPUs or MIG.
  std::string migProfile;
  int migSlices = 0;  // memory slices the profile occupies (its demand, 8 to a whole GPU)
  // The pod's nodeSelector on `nvidia.com/gpu.product` (labels-v1 `model`, the same sanitised
  // name): a pool of one machine type, e.g. "NVIDIA-GB200". Empty: any node.
  std::string gpuProduct;
  // The pod asks for exclusive GPUs (`<prefix>isolation: exclusive`, docs/sharing.md); else it
  // accepts shared ones (the policy's default isolation).
  bool exclusive = false;
  // The pod asks `<prefix>min-link: nvlink` (docs/groups.md): every pair of its GPUs NVLinked.
  // The extender and the group planner keep it off other sets; the baselines do not read it.
  bool nvlinkOnly = false;

  // GPU demand in memory slices: a whole GPU is all 8 of its slices.
  std::int64_t demandSlices() const noexcept;
};

struct SimNodeSpec {
  std::string name;
  const NodeTemplate* machine = nullptr;  // a built-in template (static lifetime)
  std::int64_t cpuMilli = 0;
  std::int64_t memoryMib = 0;
  StringMap labels{};  // labels beside labels-v1: topology domains (rack_labels.h); empty unracked
};

inline std::int64_t SimPod::demandSlices() const noexcept {
  return static_cast<std::int64_t>(gpus) * kMigMemorySlices + migSlices;
}

}  // namespace gte::sim
