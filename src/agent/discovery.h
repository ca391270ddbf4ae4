#pragma once
// What one discovery pass found on this node: the topology as labels-v1 will carry it, plus the
// device identities that usage (kubelet PodResources) refers to. Filled by the NVML path or from
// nvidia-smi text captures; usage is applied afterwards.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "policy/mig_product.h"
#include "topology/gpu_topology.h"

namespace gte::agent {

// A MIG device (GPU instance) as the device plugin hands it to pods: by UUID ("MIG-..."); text
// captures know none.
struct MigDeviceId {
  std::string uuid;
  int gpu = 0;
  int start = 0;  // first memory slice of its GPU instance
};

// The placements the driver allows for one GPU-instance profile on one GPU.
struct ProfilePlacements {
  char code = '0';    // labels-v1 profile code
  int profileId = 0;  // the driver's profile ID (what nvidia-smi shows)
  int size = 0;       // memory slices
  std::vector<int> starts;
  friend bool operator==(const ProfilePlacements&, const ProfilePlacements&) = default;
};

// One NVLink of one GPU as a pass saw it (NVML only; docs/agent.md, Health).
struct LinkSample {
  bool active = false;
  int peerGpu = -1;       // the GPU at the other end, when it is one of this node's
  bool toSwitch = false;  // the other end is an NVSwitch
  // Cumulative counters since the driver loaded; absent when the driver does not report them.
  std::optional<std::uint64_t> replay, recovery, crcFlit, crcData;
};

// One GPU's health signals as a pass read them; absent values were not reported.
struct GpuSample {
  std::vector<LinkSample> links;  // by NVML link index, up to the last link the GPU has
  std::optional<unsigned int> pcieWidth, pcieMaxWidth, pcieGen, pcieMaxGen;
  std::optional<std::uint64_t> clockEventReasons;  // nvmlClocksEventReasons bits
  std::optional<std::uint64_t> eccUncorrectedVolatile;
  std::vector<std::uint64_t> xids;  // XID critical error events drained this pass
};

struct HealthSample {
  bool present = false;         // the pass read health signals
  std::vector<GpuSample> gpus;  // per GPU
};

struct Discovery {
  GpuTopology topology;               // every GPU free, every MIG instance free
  std::vector<std::string> gpuUuids;  // per GPU ("GPU-..."); empty for text captures
  std::vector<std::string> busIds;    // per GPU ("00000000:07:00.0"); empty for text captures
  std::vector<MigDeviceId> migDevices;
  std::vector<std::vector<ProfilePlacements>> placements;  // per GPU; NVML, MIG-capable GPUs only
  HealthSample health;  // NVML with NvmlDiscoveryOptions::sampleHealth
  // Per GPU (NVML): why discovery itself marked it unhealthy (lost, memory repair pending).
  std::vector<std::vector<std::string>> healthReasons;
};

// Where the driver's possible placements disagree with the extender's MIG product table for this
// model (which is what the extender plans with): one line per profile. Empty when they agree or
// the driver reported none.
std::vector<std::string> placementMismatches(const Discovery& discovery,
                                             const std::vector<MigProduct>& products);

}  // namespace gte::agent
