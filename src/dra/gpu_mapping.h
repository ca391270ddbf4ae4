#pragma once
// Which GPU of the node's topology graph (labels-v1 index) each DRA device is, or is part of.
// The NVIDIA DRA driver (`gpu.nvidia.com`) names a whole GPU `gpu-<minor>` (the /dev/nvidia minor
// number, not the NVML index) and no longer publishes its index, so the mapping goes by identity,
// in this order of precedence (docs/dra.md, "Device to GPU mapping"):
//   1. the PCI bus id (`resource.kubernetes.io/pciBusID`, or the older `gpu.nvidia.com/pcieBusID`)
//      against labels-v1 `bus`;
//   2. the UUID (`uuid`; a MIG device's `parentUUID`) against labels-v1 `uuid`;
//   3. the `index` attribute older drivers (v25.3) published: the NVML index itself;
//   4. the device name `gpu-<n>` (a MIG device's `gpu-<n>-mig-...`) taken as index n: an
//      assumption (minor numbers need not follow the index), counted and shown in explain.
// A mismatch maps nothing and is an error naming the node: more whole-GPU devices than the graph
// has GPUs, an identity the graph does not have, two devices on one GPU, or GPUs the device plugin
// advertises (allocatable nvidia.com/gpu) while DRA publishes them too. The node's DRA GPUs are
// then topology-unknown.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dra/node_devices.h"
#include "topology/gpu_topology.h"

namespace gte::dra {

inline constexpr std::string_view kNvidiaGpuDriver = "gpu.nvidia.com";

enum class DeviceRole : std::uint8_t {
  kOther,     // not a GPU of this node's graph (another driver, a compute-domain channel)
  kWholeGpu,  // `type` gpu (or vfio: the GPU passed through whole)
  kMig,       // `type` mig: an instance on a GPU
};

// Weakest last: a node's basis is the weakest any of its devices needed.
enum class MappingBasis : std::uint8_t { kNone, kBusId, kUuid, kIndexAttribute, kDeviceName };

const char* mappingBasisName(MappingBasis basis) noexcept;

struct DeviceGpu {
  DeviceRole role = DeviceRole::kOther;
  std::int8_t gpu = -1;  // the graph index; -1 unmapped
  MappingBasis basis = MappingBasis::kNone;
};

struct GpuMapping {
  std::vector<DeviceGpu> devices;  // parallel to NodeDevices::devices
  MappingBasis weakest = MappingBasis::kNone;
  int assumed = 0;        // devices mapped by name alone
  std::string error;      // a mismatch; every device then unmapped
  GpuMask wholeGpus = 0;  // GPUs that have a whole-GPU device
};

GpuMapping mapGpuDevices(std::string_view nodeName, const NodeDevices& devices,
                         const GpuTopology& topology, bool devicePluginAdvertisesGpus);

}  // namespace gte::dra
