#pragma once
// Which GPU devices the kubelet has handed to pods: PodResourcesLister.List on the kubelet's unix
// socket (/var/lib/kubelet/pod-resources/kubelet.sock). gRPC headers stay in the .cpp.
#include <chrono>
#include <string>
#include <vector>

#include "base/result.h"

namespace gte::agent {

// Device ids of every container's devices whose resource is a whole NVIDIA GPU
// (`nvidia.com/gpu`) or a MIG device (`nvidia.com/mig-*`), in the order the kubelet lists them.
// The ids are what the device plugin registered: GPU or MIG UUIDs, or indices. An unreachable
// socket or a failed call is an error naming the socket (the caller writes nothing then).
Result<std::vector<std::string>> listAllocatedGpuDevices(
    const std::string& socketPath, std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace gte::agent
