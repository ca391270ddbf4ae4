#include "agent/nvml_library.h"

#include <dlfcn.h>

namespace gte::agent {
namespace {

template <typename Fn>
void bind(void* handle, const char* symbol, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(handle, symbol));
}

}  // namespace

Result<std::unique_ptr<NvmlLibrary>> NvmlLibrary::open(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return Error{ErrorCode::kUnavailable,
                 "cannot load " + path + " (" + (why ? why : "unknown dlopen error") +
                     "): is the NVIDIA driver installed and its library visible to this process "
                     "(container runtime class nvidia, or --nvml-lib)?"};
  }
  NvmlFunctions fn;
  bind(handle, "nvmlInit_v2", fn.init);
  bind(handle, "nvmlShutdown", fn.shutdown);
  bind(handle, "nvmlErrorString", fn.errorString);
  bind(handle, "nvmlDeviceGetCount_v2", fn.deviceCount);
  bind(handle, "nvmlDeviceGetHandleByIndex_v2", fn.handleByIndex);
  bind(handle, "nvmlDeviceGetUUID", fn.uuid);
  bind(handle, "nvmlDeviceGetName", fn.name);
  bind(handle, "nvmlDeviceGetPciInfo_v3", fn.pciInfo);
  bind(handle, "nvmlDeviceGetTopologyCommonAncestor", fn.commonAncestor);
  bind(handle, "nvmlDeviceGetNumaNodeId", fn.numaNodeId);
  bind(handle, "nvmlDeviceGetNvLinkState", fn.nvlinkState);
  bind(handle, "nvmlDeviceGetNvLinkRemotePciInfo_v2", fn.nvlinkRemotePci);
  bind(handle, "nvmlDeviceGetNvLinkRemoteDeviceType", fn.nvlinkRemoteType);
  bind(handle, "nvmlDeviceGetMigMode", fn.migMode);
  bind(handle, "nvmlDeviceGetGpuInstanceProfileInfo", fn.profileInfo);
  bind(handle, "nvmlDeviceGetGpuInstancePossiblePlacements_v2", fn.possiblePlacements);
  bind(handle, "nvmlDeviceGetGpuInstances", fn.gpuInstances);
  bind(handle, "nvmlGpuInstanceGetInfo", fn.instanceInfo);
  bind(handle, "nvmlDeviceGetMaxMigDeviceCount", fn.maxMigDevices);
  bind(handle, "nvmlDeviceGetMigDeviceHandleByIndex", fn.migDeviceByIndex);
  bind(handle, "nvmlDeviceGetGpuInstanceId", fn.gpuInstanceId);
  bind(handle, "nvmlDeviceGetRetiredPagesPendingStatus", fn.retiredPagesPending);
  bind(handle, "nvmlDeviceGetRemappedRows", fn.remappedRows);
  bind(handle, "nvmlDeviceGetNvLinkErrorCounter", fn.nvlinkErrorCounter);
  bind(handle, "nvmlDeviceGetCurrPcieLinkWidth", fn.pcieWidth);
  bind(handle, "nvmlDeviceGetMaxPcieLinkWidth", fn.pcieMaxWidth);
  bind(handle, "nvmlDeviceGetCurrPcieLinkGeneration", fn.pcieGen);
  bind(handle, "nvmlDeviceGetMaxPcieLinkGeneration", fn.pcieMaxGen);
  bind(handle, "nvmlDeviceGetCurrentClocksEventReasons", fn.clockEventReasons);
  if (fn.clockEventReasons == nullptr) {  // drivers before the rename
    bind(handle, "nvmlDeviceGetCurrentClocksThrottleReasons", fn.clockEventReasons);
  }
  bind(handle, "nvmlDeviceGetTotalEccErrors", fn.totalEccErrors);
  bind(handle, "nvmlEventSetCreate", fn.eventSetCreate);
  bind(handle, "nvmlDeviceRegisterEvents", fn.registerEvents);
  bind(handle, "nvmlEventSetWait_v2", fn.eventSetWait);
  bind(handle, "nvmlEventSetFree", fn.eventSetFree);
  const std::pair<const char*, const void*> required[] = {
      {"nvmlInit_v2", reinterpret_cast<const void*>(fn.init)},
      {"nvmlShutdown", reinterpret_cast<const void*>(fn.shutdown)},
      {"nvmlErrorString", reinterpret_cast<const void*>(fn.errorString)},
      {"nvmlDeviceGetCount_v2", reinterpret_cast<const void*>(fn.deviceCount)},
      {"nvmlDeviceGetHandleByIndex_v2", reinterpret_cast<const void*>(fn.handleByIndex)},
      {"nvmlDeviceGetUUID", reinterpret_cast<const void*>(fn.uuid)},
      {"nvmlDeviceGetName", reinterpret_cast<const void*>(fn.name)},
      {"nvmlDeviceGetPciInfo_v3", reinterpret_cast<const void*>(fn.pciInfo)},
      {"nvmlDeviceGetTopologyCommonAncestor", reinterpret_cast<const void*>(fn.commonAncestor)},
  };
  for (const auto& [symbol, address] : required) {
    if (address == nullptr) {
      dlclose(handle);
      return Error{ErrorCode::kUnavailable,
                   path + " lacks " + symbol + " (driver too old for this agent?)"};
    }
  }
  if (const nvmlReturn_t rc = fn.init(); rc != nvml::kSuccess) {
    const std::string why = fn.errorString(rc);
    dlclose(handle);
    return Error{ErrorCode::kUnavailable, "nvmlInit_v2: " + why + " (" + std::to_string(rc) + ")"};
  }
  return std::unique_ptr<NvmlLibrary>(new NvmlLibrary(handle, fn));
}

NvmlLibrary::~NvmlLibrary() {
  fn_.shutdown();
  dlclose(handle_);
}

std::string NvmlLibrary::describe(const char* call, nvmlReturn_t code) const {
  return std::string(call) + ": " + fn_.errorString(code) + " (" + std::to_string(code) + ")";
}

}  // namespace gte::agent
