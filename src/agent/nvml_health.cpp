#include "agent/nvml_health.h"

#include "log/logger.h"

namespace gte::agent {
namespace {

constexpr int kMaxEventsPerPass = 1024;

}  // namespace

XidWatcher::XidWatcher(const NvmlLibrary& nvml) : nvml_(nvml) {
  const NvmlFunctions& fn = nvml.fn();
  if (fn.eventSetCreate == nullptr || fn.registerEvents == nullptr || fn.eventSetWait == nullptr ||
      fn.eventSetFree == nullptr) {
    return;
  }
  if (fn.eventSetCreate(&set_) != nvml::kSuccess) {
    set_ = nullptr;
    return;
  }
  unsigned int count = 0;
  if (fn.deviceCount(&count) != nvml::kSuccess) {
    return;
  }
  handles_.assign(count, nullptr);
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t device = nullptr;
    if (fn.handleByIndex(i, &device) != nvml::kSuccess) {
      continue;
    }
    if (fn.registerEvents(device, nvml::kEventTypeXidCriticalError, set_) == nvml::kSuccess) {
      handles_[i] = device;
      ++registered_;
    }
  }
}

XidWatcher::~XidWatcher() {
  if (set_ != nullptr) {
    nvml_.fn().eventSetFree(set_);
  }
}

void XidWatcher::drain(HealthSample& sample) {
  if (!active()) {
    return;
  }
  for (int k = 0; k < kMaxEventsPerPass; ++k) {
    nvmlEventData_t data{};
    if (nvml_.fn().eventSetWait(set_, &data, 0) != nvml::kSuccess) {
      return;  // NVML_ERROR_TIMEOUT: none left
    }
    if ((data.eventType & nvml::kEventTypeXidCriticalError) == 0) {
      continue;
    }
    for (std::size_t i = 0; i < handles_.size() && i < sample.gpus.size(); ++i) {
      if (handles_[i] != nullptr && handles_[i] == data.device) {
        sample.gpus[i].xids.push_back(data.eventData);
        log::warn("XID event", {{"gpu", std::to_string(i)},
                                {"xid", std::to_string(data.eventData)},
                                {"action", xidActionName(xidAction(data.eventData))}});
      }
    }
  }
}

NvmlHealthSource::NvmlHealthSource(std::string libraryPath, LinkHealthSettings settings,
                                   NvmlDiscoveryOptions options, Now now)
    : libraryPath_(std::move(libraryPath)),
      options_(std::move(options)),
      now_(std::move(now)),
      monitor_(settings) {
  options_.sampleHealth = true;
}

NvmlHealthSource::~NvmlHealthSource() {
  xids_.reset();
  library_.reset();
}

Result<Discovery> NvmlHealthSource::discover() {
  if (!library_) {
    auto library = NvmlLibrary::open(libraryPath_);
    if (!library.ok()) {
      return library.error();
    }
    library_ = std::move(library).value();
    xids_ = std::make_unique<XidWatcher>(*library_);
  }
  auto discovery = discoverWithNvml(*library_, options_);
  if (!discovery.ok()) {
    xids_.reset();
    library_.reset();
    return discovery.error();
  }
  xids_->drain(discovery->health);
  verdict_ = monitor_.evaluate(*discovery, now_());
  applyHealth(verdict_, discovery->topology);
  return discovery;
}

}  // namespace gte::agent
