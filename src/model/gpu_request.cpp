#include "model/gpu_request.h"

#include <string>

namespace gte {

Result<GpuRequest> gpuRequestFrom(const ResourceList& requests) {
  GpuRequest out;
  for (const auto& [name, quantity] : requests.entries()) {
    const bool isGpu = name == kGpuResource;
    const bool isShared = name == kSharedGpuResource;
    const bool isMig =
        name.size() > kMigResourcePrefix.size() && name.starts_with(kMigResourcePrefix);
    if (!isGpu && !isShared && !isMig) continue;
    const auto units = quantity.wholeUnits();
    if (!units || *units < 0) {
      return invalidArgument("request of " + name + " must be a non-negative whole number");
    }
    if (isGpu) {
      out.gpus = *units;
    } else if (isShared) {
      out.sharedGpus = *units;
    } else if (*units > 0) {
      out.mig.push_back(MigRequest{name.substr(kMigResourcePrefix.size()), *units});
    }
  }
  return out;  // entries are sorted by name, so mig is sorted by profile
}

}  // namespace gte
