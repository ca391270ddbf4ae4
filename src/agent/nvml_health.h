#pragma once
// NVML health across passes (docs/agent.md, Health): one NVML session kept open, one long-lived
// event set for XID critical errors drained each pass, and the HealthMonitor whose windows span
// passes. Every call it makes beyond the required discovery set is optional: a driver without it
// goes without that signal.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agent/discovery.h"
#include "agent/health_monitor.h"
#include "agent/nvml_discovery.h"
#include "agent/nvml_library.h"
#include "base/result.h"

namespace gte::agent {

// nvmlEventSetCreate + nvmlDeviceRegisterEvents(Xid critical error) per GPU; freed on destruction.
class XidWatcher {
 public:
  explicit XidWatcher(const NvmlLibrary& nvml);
  ~XidWatcher();
  XidWatcher(const XidWatcher&) = delete;
  XidWatcher& operator=(const XidWatcher&) = delete;

  // True when the driver has the event calls and at least one GPU is registered.
  bool active() const { return set_ != nullptr && registered_ > 0; }
  // Drains the pending events (nvmlEventSetWait_v2 with a 0 ms timeout) into `sample`'s GPUs.
  void drain(HealthSample& sample);

 private:
  const NvmlLibrary& nvml_;
  nvmlEventSet_t set_ = nullptr;
  std::vector<nvmlDevice_t> handles_;
  int registered_ = 0;
};

class NvmlHealthSource {
 public:
  using Now = std::function<HealthClock::time_point()>;
  NvmlHealthSource(std::string libraryPath, LinkHealthSettings settings,
                   NvmlDiscoveryOptions options = {}, Now now = HealthClock::now);
  ~NvmlHealthSource();

  // One pass: opens NVML unless open, discovers with health sampling, drains XIDs, evaluates and
  // writes the verdict into the topology. An NVML failure closes the session; the next pass
  // opens it again (a driver reload); the health windows are kept.
  Result<Discovery> discover();

  const HealthVerdict& lastVerdict() const { return verdict_; }
  std::string renderMetrics() const { return monitor_.renderMetrics(); }
  bool watchingXids() const { return xids_ != nullptr && xids_->active(); }

 private:
  std::string libraryPath_;
  NvmlDiscoveryOptions options_;
  Now now_;
  std::unique_ptr<NvmlLibrary> library_;
  std::unique_ptr<XidWatcher> xids_;  // destroyed before the library
  HealthMonitor monitor_;
  HealthVerdict verdict_;
};

}  // namespace gte::agent
