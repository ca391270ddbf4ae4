#pragma once
// Discovery through NVML: GPUs in NVML enumeration order (the index nvidia-smi and the device
// plugin use), PCIe common ancestor per pair, NVLink per pair from each GPU's active links and
// their remote PCI ids (links to an NVSwitch count for every pair on the fabric, as `nvidia-smi
// topo -m` shows them), NUMA (NVML, else sysfs), health, MIG mode, GPU instances and possible
// placements.
//
// Health (one character per GPU): unhealthy when NVML reports the GPU lost, when row remapping
// failed or is pending (A100 and later: uncorrectable memory errors, reset needed), or when page
// retirement is pending (earlier GPUs: reset needed). Checks a GPU does not support are skipped.
// With `sampleHealth` the pass also reads the health signals of docs/agent.md (Health) into
// Discovery::health: per link state, remote and error counters, PCIe width and generation, clock
// event reasons, volatile uncorrectable ECC. XID events need a long-lived event set
// (nvml_health.h) and are added there.
#include <string>

#include "agent/discovery.h"
#include "agent/nvml_library.h"
#include "base/result.h"

namespace gte::agent {

struct NvmlDiscoveryOptions {
  std::string sysfsRoot = "/sys";  // NUMA fallback: <root>/bus/pci/devices/<bdf>/numa_node
  bool sampleHealth = false;
};

Result<Discovery> discoverWithNvml(const NvmlLibrary& nvml, const NvmlDiscoveryOptions& options);

// Opens the library, discovers, closes it.
Result<Discovery> discoverWithNvml(const std::string& libraryPath,
                                   const NvmlDiscoveryOptions& options = {});

}  // namespace gte::agent
