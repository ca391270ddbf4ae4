#include "dra/device_taint_rule.h"

namespace gte::dra {

bool DeviceTaintRule::selectsSlice(const ResourceSlice& slice) const noexcept {
  if (!selector) return false;
  if (selector->driver && *selector->driver != slice.driver) return false;
  return !selector->pool || *selector->pool == slice.pool;
}

bool DeviceTaintRule::selectsDevice(const ResourceSlice& slice,
                                    std::uint32_t index) const noexcept {
  if (!selectsSlice(slice)) return false;
  return !selector->device || *selector->device == slice.deviceName(index);
}

bool DeviceTaintRule::sameTaint(const DeviceTaintRule& other) const noexcept {
  return selector == other.selector && key == other.key && value == other.value &&
         effect == other.effect;
}

}  // namespace gte::dra
