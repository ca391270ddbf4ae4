#include "agent/pod_resources_client.h"

#include <grpcpp/grpcpp.h>

#include "podresources/v1/api.grpc.pb.h"

namespace gte::agent {
namespace {

// Whole GPUs, the device plugin's renamed replicas of shared GPUs (renameByDefault) and MIG
// devices, shared or not.
bool gpuResource(const std::string& name) {
  return name == "nvidia.com/gpu" || name == "nvidia.com/gpu.shared" ||
         name.rfind("nvidia.com/mig-", 0) == 0;
}

}  // namespace

Result<std::vector<std::string>> listAllocatedGpuDevices(const std::string& socketPath,
                                                         std::chrono::milliseconds timeout) {
  auto channel = grpc::CreateChannel("unix://" + socketPath, grpc::InsecureChannelCredentials());
  auto stub = v1::PodResourcesLister::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + timeout);
  v1::ListPodResourcesRequest request;
  v1::ListPodResourcesResponse response;
  const grpc::Status status = stub->List(&context, request, &response);
  if (!status.ok()) {
    return Error{ErrorCode::kUnavailable, "kubelet PodResources List on " + socketPath + ": " +
                                              status.error_message() + " (gRPC code " +
                                              std::to_string(status.error_code()) + ")"};
  }
  std::vector<std::string> ids;
  for (const auto& pod : response.pod_resources()) {
    for (const auto& container : pod.containers()) {
      for (const auto& devices : container.devices()) {
        if (!gpuResource(devices.resource_name())) {
          continue;
        }
        for (const auto& id : devices.device_ids()) {
          ids.push_back(id);
        }
      }
    }
  }
  return ids;
}

}  // namespace gte::agent
