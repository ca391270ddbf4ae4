#include "dra/allocated_devices.h"

namespace gte::dra {

std::string AllocatedDevices::key(std::string_view driver, std::string_view pool,
                                  std::string_view device) {
  // Newlines appear in none of the three names (DNS names and labels), so the key is unambiguous.
  std::string out;
  out.reserve(driver.size() + pool.size() + device.size() + 2);
  out.append(driver).append(1, '\n').append(pool).append(1, '\n').append(device);
  return out;
}

void AllocatedDevices::addClaim(const ResourceClaim& claim) {
  if (!claim.allocated) return;
  for (const AllocatedDevice& device : claim.devices) {
    if (device.adminAccess) continue;
    if (device.shared) {
      addShared(device.driver, device.pool, device.device);
    } else {
      addExclusive(device.driver, device.pool, device.device);
    }
  }
}

void AllocatedDevices::addExclusive(std::string_view driver, std::string_view pool,
                                    std::string_view device) {
  exclusive_.insert(key(driver, pool, device));
}

void AllocatedDevices::addShared(std::string_view driver, std::string_view pool,
                                 std::string_view device) {
  shared_.insert(key(driver, pool, device));
}

bool AllocatedDevices::exclusive(std::string_view driver, std::string_view pool,
                                 std::string_view device) const {
  return exclusive_.count(key(driver, pool, device)) != 0;
}

bool AllocatedDevices::allocated(std::string_view driver, std::string_view pool,
                                 std::string_view device) const {
  const std::string k = key(driver, pool, device);
  return exclusive_.count(k) != 0 || shared_.count(k) != 0;
}

}  // namespace gte::dra
