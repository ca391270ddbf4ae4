#pragma once
// A resource.k8s.io/v1 DeviceTaintRule (Kubernetes 1.37, GA): one taint that kube-scheduler adds to
// every device its selector matches, as if the device's driver had published it in the device's
// ResourceSlice (docs/dra.md, "Device taint rules"). The selector names a driver, a pool and a
// device name, each optional; a rule without `spec.deviceSelector` matches no device, an empty one
// every device. Only the taint's key, value and effect matter to the allocator (`timeAdded` and
// the status are about eviction), and only the effects NoSchedule and NoExecute keep a device
// from being allocated.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "dra/resource_slice.h"
#include "json/json_reader.h"

namespace gte::dra {

struct DeviceTaintSelector {
  std::optional<std::string> driver;  // spec.deviceSelector.driver
  std::optional<std::string> pool;    // spec.deviceSelector.pool
  std::optional<std::string> device;  // spec.deviceSelector.device
  friend bool operator==(const DeviceTaintSelector&, const DeviceTaintSelector&) = default;
};

struct DeviceTaintRule {
  std::string name;
  std::string resourceVersion;  // metadata.resourceVersion (a watch resumes from it)
  std::optional<DeviceTaintSelector> selector;  // none: the rule selects no device
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNone;

  // Whether the taint keeps an untolerating claim off the device: NoSchedule or NoExecute. None
  // and effects this reader does not know are informational (the API: "consumers must treat
  // unknown effects like None").
  bool blocks() const noexcept {
    return effect == TaintEffect::kNoSchedule || effect == TaintEffect::kNoExecute;
  }
  // The selector's driver and pool match the slice (devices are not looked at).
  bool selectsSlice(const ResourceSlice& slice) const noexcept;
  // The selector matches device `index` of the slice.
  bool selectsDevice(const ResourceSlice& slice, std::uint32_t index) const noexcept;
  // Same selector and taint: the allocator sees no difference (metadata and status aside).
  bool sameTaint(const DeviceTaintRule& other) const noexcept;
};

using DeviceTaintRuleConstSharedPtr = std::shared_ptr<const DeviceTaintRule>;

// Readers (pull parser); every malformed field is an Error naming the rule and the field. A rule
// without metadata.name, spec.taint.key or spec.taint.effect (all required by the API) is refused.
Result<DeviceTaintRuleConstSharedPtr> parseDeviceTaintRuleJson(std::string_view json);
Result<DeviceTaintRuleConstSharedPtr> readDeviceTaintRule(json::JsonReader& reader);

}  // namespace gte::dra
