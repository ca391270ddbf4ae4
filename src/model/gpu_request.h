#pragma once
// What a pod asks of this extender: whole GPUs (nvidia.com/gpu) and MIG instances
// (nvidia.com/mig-<profile>, e.g. nvidia.com/mig-3g.40gb), taken from its effective requests.
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "model/resource_list.h"

namespace gte {

inline constexpr std::string_view kGpuResource = "nvidia.com/gpu";
// The NVIDIA device plugin's name for replicas of shared GPUs under `renameByDefault` (time-slicing
// or MPS, docs/sharing.md): the node advertises them instead of nvidia.com/gpu.
inline constexpr std::string_view kSharedGpuResource = "nvidia.com/gpu.shared";
inline constexpr std::string_view kMigResourcePrefix = "nvidia.com/mig-";

struct MigRequest {
  std::string profile;  // "3g.40gb", "1g.10gb+me", ... (resource name without the prefix)
  std::int64_t count = 0;
  friend bool operator==(const MigRequest&, const MigRequest&) = default;
};

struct GpuRequest {
  std::int64_t gpus = 0;        // whole GPUs
  std::vector<MigRequest> mig;  // sorted by profile, counts > 0
  std::int64_t sharedGpus = 0;  // replicas of shared GPUs asked as nvidia.com/gpu.shared
  bool empty() const noexcept { return gpus == 0 && mig.empty() && sharedGpus == 0; }
  friend bool operator==(const GpuRequest&, const GpuRequest&) = default;
};

// Extracts the managed resources. Errors: a fractional or negative GPU/MIG quantity.
Result<GpuRequest> gpuRequestFrom(const ResourceList& requests);

}  // namespace gte
