#pragma once
// libnvidia-ml loaded with dlopen at run time: the agent builds and starts on machines without the
// NVIDIA driver and says clearly what is missing. Required symbols missing is an error; optional
// ones (NUMA id, NVLink remote type, MIG, health counters: newer or GPU-specific) are null and the
// caller falls back.
#include <memory>
#include <string>

#include "agent/nvml_api.h"
#include "base/result.h"

namespace gte::agent {

struct NvmlFunctions {
  // Required.
  nvml::InitFn init = nullptr;                      // nvmlInit_v2
  nvml::ShutdownFn shutdown = nullptr;              // nvmlShutdown
  nvml::ErrorStringFn errorString = nullptr;        // nvmlErrorString
  nvml::CountFn deviceCount = nullptr;              // nvmlDeviceGetCount_v2
  nvml::HandleByIndexFn handleByIndex = nullptr;    // nvmlDeviceGetHandleByIndex_v2
  nvml::StringFn uuid = nullptr;                    // nvmlDeviceGetUUID
  nvml::StringFn name = nullptr;                    // nvmlDeviceGetName
  nvml::PciInfoFn pciInfo = nullptr;                // nvmlDeviceGetPciInfo_v3
  nvml::CommonAncestorFn commonAncestor = nullptr;  // nvmlDeviceGetTopologyCommonAncestor
  // Optional.
  nvml::UintFn numaNodeId = nullptr;                // nvmlDeviceGetNumaNodeId
  nvml::LinkIntFn nvlinkState = nullptr;            // nvmlDeviceGetNvLinkState
  nvml::LinkPciFn nvlinkRemotePci = nullptr;        // nvmlDeviceGetNvLinkRemotePciInfo_v2
  nvml::LinkIntFn nvlinkRemoteType = nullptr;       // nvmlDeviceGetNvLinkRemoteDeviceType
  nvml::MigModeFn migMode = nullptr;                // nvmlDeviceGetMigMode
  nvml::ProfileInfoFn profileInfo = nullptr;        // nvmlDeviceGetGpuInstanceProfileInfo
  nvml::PlacementsFn possiblePlacements = nullptr;  // nvmlDeviceGetGpuInstancePossiblePlacements_v2
  nvml::InstancesFn gpuInstances = nullptr;         // nvmlDeviceGetGpuInstances
  nvml::InstanceInfoFn instanceInfo = nullptr;      // nvmlGpuInstanceGetInfo
  nvml::UintFn maxMigDevices = nullptr;             // nvmlDeviceGetMaxMigDeviceCount
  nvml::MigHandleFn migDeviceByIndex = nullptr;     // nvmlDeviceGetMigDeviceHandleByIndex
  nvml::UintFn gpuInstanceId = nullptr;             // nvmlDeviceGetGpuInstanceId
  nvml::RetiredPendingFn retiredPagesPending = nullptr;  // nvmlDeviceGetRetiredPagesPendingStatus
  nvml::RemappedRowsFn remappedRows = nullptr;           // nvmlDeviceGetRemappedRows
  // Health signals (docs/agent.md, Health): sampled each pass when present.
  nvml::NvlinkErrorCounterFn nvlinkErrorCounter = nullptr;  // nvmlDeviceGetNvLinkErrorCounter
  nvml::UintFn pcieWidth = nullptr;                         // nvmlDeviceGetCurrPcieLinkWidth
  nvml::UintFn pcieMaxWidth = nullptr;                      // nvmlDeviceGetMaxPcieLinkWidth
  nvml::UintFn pcieGen = nullptr;                           // nvmlDeviceGetCurrPcieLinkGeneration
  nvml::UintFn pcieMaxGen = nullptr;                        // nvmlDeviceGetMaxPcieLinkGeneration
  // nvmlDeviceGetCurrentClocksEventReasons, else nvmlDeviceGetCurrentClocksThrottleReasons.
  nvml::Uint64Fn clockEventReasons = nullptr;
  nvml::TotalEccFn totalEccErrors = nullptr;        // nvmlDeviceGetTotalEccErrors
  nvml::EventSetCreateFn eventSetCreate = nullptr;  // nvmlEventSetCreate
  nvml::RegisterEventsFn registerEvents = nullptr;  // nvmlDeviceRegisterEvents
  nvml::EventSetWaitFn eventSetWait = nullptr;      // nvmlEventSetWait_v2
  nvml::EventSetFreeFn eventSetFree = nullptr;      // nvmlEventSetFree
};

// Owns the dlopen handle and one nvmlInit_v2 / nvmlShutdown pair.
class NvmlLibrary {
 public:
  // `path` is a dlopen name ("libnvidia-ml.so.1", searched like any shared library) or a path.
  static Result<std::unique_ptr<NvmlLibrary>> open(const std::string& path);
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const NvmlFunctions& fn() const { return fn_; }
  // "nvmlDeviceGetUUID: GPU is lost (15)".
  std::string describe(const char* call, nvmlReturn_t code) const;

 private:
  NvmlLibrary(void* handle, NvmlFunctions fn) : handle_(handle), fn_(fn) {}
  void* handle_;
  NvmlFunctions fn_;
};

}  // namespace gte::agent
