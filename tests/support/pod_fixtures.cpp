#include "support/pod_fixtures.h"

#include "model/gpu_request.h"

namespace gte::testing {

PodInfo makeGpuPod(const std::string& name, std::int64_t gpus,
                   const std::vector<std::pair<std::string, std::string>>& annotations) {
  PodInfo pod;
  pod.name = name;
  pod.ns = "default";
  pod.uid = "uid-" + name;
  pod.phase = "Pending";
  if (gpus > 0) {
    pod.requests.set(std::string(kGpuResource), Quantity::fromUnits(gpus));
  }
  pod.requests.set("cpu", Quantity::fromUnits(1));
  for (const auto& [key, value] : annotations) {
    pod.annotations[key] = value;
  }
  return pod;
}

PodInfo makeMigPod(const std::string& name,
                   const std::vector<std::pair<std::string, std::int64_t>>& instances) {
  PodInfo pod = makeGpuPod(name, 0);
  for (const auto& [profile, count] : instances) {
    pod.requests.set(std::string(kMigResourcePrefix) + profile, Quantity::fromUnits(count));
  }
  return pod;
}

}  // namespace gte::testing
