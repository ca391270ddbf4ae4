#include "core/pod_demand.h"

#include <string>

namespace gte {
namespace {

const std::string* annotation(const PodInfo& pod, const Policy& policy, std::string_view key) {
  const auto it = pod.annotations.find(policy.labelPrefix + std::string(key));
  return it == pod.annotations.end() ? nullptr : &it->second;
}

Error badAnnotation(const Policy& policy, std::string_view key, std::string_view want,
                    const std::string& got) {
  return invalidArgument("annotation " + policy.labelPrefix + std::string(key) + ": want " +
                         std::string(want) + "; got '" + got + "'");
}

}  // namespace

std::int64_t PodDemand::migInstanceCount() const noexcept {
  std::int64_t total = 0;
  for (const MigRequest& request : mig) {
    total += request.count;
  }
  return total;
}

Result<PodDemand> parsePodDemand(const PodInfo& pod, const Policy& policy,
                                 const dra::DraObjects* dra) {
  Result<GpuRequest> request = gpuRequestFrom(pod.requests);
  if (!request.ok()) {
    return request.error();
  }
  if (request->gpus > 0 && request->sharedGpus > 0) {
    return invalidArgument("the pod asks for both " + std::string(kGpuResource) + " and " +
                           std::string(kSharedGpuResource) +
                           ": no node advertises both (the device plugin renames all of a "
                           "node's shared replicas)");
  }
  PodDemand demand;
  demand.gpus = request->gpus;
  demand.strategy = policy.defaultStrategy;
  demand.isolation = policy.sharing.defaultIsolation;
  if (request->sharedGpus > 0) {
    // Replicas of shared GPUs by name: shared whatever the policy's default isolation.
    demand.gpus = request->sharedGpus;
    demand.sharedResource = true;
    demand.isolation = Isolation::kShared;
  }
  if (pod.largestContainerGpus >= 0 && pod.largestContainerGpus < demand.gpus) {
    demand.largestContainerGpus = pod.largestContainerGpus;
  }
  demand.mig = std::move(request).value().mig;
  demand.sharedPlacement = policy.sharing.placement;
  // A DRA-backed extended resource stands for nvidia.com/gpu, never for the renamed replicas.
  demand.dra = resolveDraDemand(pod, demand.sharedResource ? 0 : demand.gpus, dra);

  if (const std::string* value = annotation(pod, policy, kMinLinkAnnotation)) {
    // `sameboard` and `unknown` are internal classes; the annotation offers the documented six.
    const auto cls = linkClassFromName(*value);
    if (!cls || *cls == LinkClass::kUnknown || *cls == LinkClass::kSameBoard) {
      return badAnnotation(policy, kMinLinkAnnotation, "one of nvlink, pix, pxb, phb, node, sys",
                           *value);
    }
    demand.minLink = *cls;
  }
  if (const std::string* value = annotation(pod, policy, kNumaAnnotation)) {
    if (*value != "single") {
      return badAnnotation(policy, kNumaAnnotation, "single", *value);
    }
    demand.singleNuma = true;
  }
  if (const std::string* value = annotation(pod, policy, kStrategyAnnotation)) {
    const auto strategy = strategyFromName(*value);
    if (!strategy) {
      return badAnnotation(policy, kStrategyAnnotation, "binpack or spread", *value);
    }
    demand.strategy = *strategy;
  }
  if (const std::string* value = annotation(pod, policy, kIsolationAnnotation)) {
    const auto isolation = isolationFromName(*value);
    if (!isolation) {
      return badAnnotation(policy, kIsolationAnnotation, "exclusive or shared", *value);
    }
    if (demand.sharedResource && *isolation == Isolation::kExclusive) {
      return invalidArgument("annotation " + policy.labelPrefix +
                             std::string(kIsolationAnnotation) +
                             ": exclusive, but the pod asks for " +
                             std::string(kSharedGpuResource) + " (replicas of shared GPUs)");
    }
    demand.isolation = *isolation;
  }
  if (const std::string* value = annotation(pod, policy, kReplicasOnAnnotation)) {
    if (*value == "distinct") {
      demand.replicasOn = ReplicasOn::kDistinct;
    } else if (*value == "same") {
      demand.replicasOn = ReplicasOn::kSame;
    } else {
      return badAnnotation(policy, kReplicasOnAnnotation, "distinct or same", *value);
    }
  }
  return demand;
}

}  // namespace gte
