#pragma once
// An estimate of the bandwidth a set of GPUs gets between its members, from what the labels say
// about each pair (NVLink count, PCIe level) and the GPU's generation (the NVLink and PCIe
// generations it ships with). The numbers, and where each comes from, are in
// docs/topology-health.md ("The bandwidth model"). It ranks placements for operators (placement
// regret): it is not a measurement and never decides a placement. Pure.
#include <array>
#include <cstdint>
#include <string_view>

#include "topology/gpu_topology.h"

namespace gte {

enum class GpuGeneration : std::uint8_t {
  kUnknown,    // a model the table does not know: NVLink 3/4 per-link rate, PCIe Gen4
  kPascal,     // NVLink 1.0, PCIe Gen3
  kVolta,      // NVLink 2.0, PCIe Gen3
  kTuring,     // NVLink 2.0 bridges, PCIe Gen3
  kAmpere,     // NVLink 3.0, PCIe Gen4
  kAda,        // no NVLink, PCIe Gen4
  kHopper,     // NVLink 4.0, PCIe Gen5
  kBlackwell,  // NVLink 5.0, PCIe Gen5
};

// From the sanitised product name (labels-v1 `model`, GFD `nvidia.com/gpu.product`), e.g.
// "NVIDIA-A100-SXM4-80GB", "Tesla-V100-SXM2-16GB", "NVIDIA-GeForce-RTX-4090".
GpuGeneration gpuGenerationOf(std::string_view model) noexcept;
std::string_view gpuGenerationName(GpuGeneration generation) noexcept;

// GB/s in one direction over one NVLink of this generation.
int nvlinkGBpsPerLink(GpuGeneration generation) noexcept;
// The PCIe generation the GPU's host link runs at (3, 4 or 5).
int pcieGeneration(GpuGeneration generation) noexcept;
// GB/s in one direction between two GPUs whose common PCIe ancestor is `level`, at PCIe
// generation `gen`; 0 for kUnknown.
int pcieGBps(PcieLevel level, int gen) noexcept;

// Per GPU pair of one node, in GB/s one way: NVLink count x the per-link rate where NVLink joins
// the pair (through NVSwitch the label counts the GPU's links to the switches), else the PCIe
// level's rate. 0 where the links are unknown.
class PairBandwidths {
 public:
  explicit PairBandwidths(const GpuTopology& topology) noexcept;
  int pair(int i, int j) const noexcept {
    return table_[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
  }
  // The set's weakest pair: what a collective over it is bound by. 0 for fewer than two GPUs or
  // when a pair's links are unknown.
  int set(GpuMask gpus) const noexcept;

 private:
  std::array<std::array<std::uint16_t, kMaxGpus>, kMaxGpus> table_{};
};

}  // namespace gte
