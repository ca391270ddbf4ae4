#pragma once
// The slice of the NVML C API the agent calls, declared here so the build needs no NVIDIA header
// or driver: types and layouts as in nvml.h (NVML 11+/12), function pointer types for dlsym.
// The test tree's fake libnvidia-ml.so.1 implements exactly these.
#include <cstdint>

extern "C" {

using nvmlReturn_t = int;
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlGpuInstance_st;
using nvmlGpuInstance_t = nvmlGpuInstance_st*;

struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
};

struct nvmlGpuInstancePlacement_t {
  unsigned int start;
  unsigned int size;
};

struct nvmlGpuInstanceProfileInfo_t {
  unsigned int id;
  unsigned int isP2pSupported;
  unsigned int sliceCount;
  unsigned int instanceCount;
  unsigned int multiprocessorCount;
  unsigned int copyEngineCount;
  unsigned int decoderCount;
  unsigned int encoderCount;
  unsigned int jpegCount;
  unsigned int ofaCount;
  unsigned long long memorySizeMB;
};

struct nvmlGpuInstanceInfo_t {
  nvmlDevice_t device;
  unsigned int id;
  unsigned int profileId;
  nvmlGpuInstancePlacement_t placement;
};

struct nvmlEventSet_st;
using nvmlEventSet_t = nvmlEventSet_st*;

// nvmlEventData_t: what nvmlEventSetWait_v2 fills.
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the XID for nvmlEventTypeXidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

}  // extern "C"

namespace gte::agent::nvml {

inline constexpr nvmlReturn_t kSuccess = 0;
inline constexpr nvmlReturn_t kErrorInvalidArgument = 2;
inline constexpr nvmlReturn_t kErrorNotSupported = 3;
inline constexpr nvmlReturn_t kErrorNotFound = 6;
inline constexpr nvmlReturn_t kErrorGpuIsLost = 15;

// nvmlGpuTopologyLevel_t
inline constexpr int kTopologyInternal = 0;
inline constexpr int kTopologySingle = 10;
inline constexpr int kTopologyMultiple = 20;
inline constexpr int kTopologyHostBridge = 30;
inline constexpr int kTopologyNode = 40;
inline constexpr int kTopologySystem = 50;

inline constexpr nvmlReturn_t kErrorTimeout = 10;

inline constexpr int kFeatureEnabled = 1;       // nvmlEnableState_t
inline constexpr int kNvlinkDeviceTypeGpu = 0;  // nvmlIntNvLinkDeviceType_t
inline constexpr int kNvlinkDeviceTypeSwitch = 2;
inline constexpr unsigned int kMaxNvlinks = 18;  // NVML_NVLINK_MAX_LINKS
inline constexpr unsigned int kUuidBuffer = 96;
inline constexpr unsigned int kNameBuffer = 96;
inline constexpr unsigned int kMigModeEnabled = 1;

// nvmlNvLinkErrorCounter_t
inline constexpr unsigned int kNvlinkErrorReplay = 0;    // NVML_NVLINK_ERROR_DL_REPLAY
inline constexpr unsigned int kNvlinkErrorRecovery = 1;  // NVML_NVLINK_ERROR_DL_RECOVERY
inline constexpr unsigned int kNvlinkErrorCrcFlit = 2;   // NVML_NVLINK_ERROR_DL_CRC_FLIT
inline constexpr unsigned int kNvlinkErrorCrcData = 3;   // NVML_NVLINK_ERROR_DL_CRC_DATA
// nvmlMemoryErrorType_t / nvmlEccCounterType_t
inline constexpr unsigned int kMemoryErrorUncorrected = 1;
inline constexpr unsigned int kVolatileEcc = 0;
// nvmlEventType bits
inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8ULL;
// nvmlClocksEventReasons (same bits as the older ThrottleReasons)
inline constexpr unsigned long long kClocksHwSlowdown = 0x8ULL;
inline constexpr unsigned long long kClocksHwThermalSlowdown = 0x40ULL;
inline constexpr unsigned long long kClocksHwPowerBrakeSlowdown = 0x80ULL;

using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using ErrorStringFn = const char* (*)(nvmlReturn_t);
using CountFn = nvmlReturn_t (*)(unsigned int*);
using HandleByIndexFn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using StringFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using PciInfoFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);
using UintFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using CommonAncestorFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlDevice_t, int*);
using LinkIntFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, int*);
using LinkPciFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlPciInfo_t*);
using MigModeFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*);
using ProfileInfoFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlGpuInstanceProfileInfo_t*);
using PlacementsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlGpuInstancePlacement_t*,
                                      unsigned int*);
using InstancesFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlGpuInstance_t*, unsigned int*);
using InstanceInfoFn = nvmlReturn_t (*)(nvmlGpuInstance_t, nvmlGpuInstanceInfo_t*);
using MigHandleFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlDevice_t*);
using RetiredPendingFn = nvmlReturn_t (*)(nvmlDevice_t, int*);
using NvlinkErrorCounterFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, unsigned int,
                                              unsigned long long*);
using Uint64Fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);
using TotalEccFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, unsigned int, unsigned long long*);
using EventSetCreateFn = nvmlReturn_t (*)(nvmlEventSet_t*);
using RegisterEventsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
using EventSetWaitFn = nvmlReturn_t (*)(nvmlEventSet_t, nvmlEventData_t*, unsigned int);
using EventSetFreeFn = nvmlReturn_t (*)(nvmlEventSet_t);
using RemappedRowsFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*, unsigned int*,
                                        unsigned int*);

}  // namespace gte::agent::nvml
