#include "dra/allocated_devices.h"

#include <algorithm>

namespace gte::dra {

std::string AllocatedDevices::key(std::string_view driver, std::string_view pool,
                                  std::string_view device) {
  // Newlines appear in none of the three names (DNS names and labels), so the key is unambiguous.
  std::string out;
  out.reserve(driver.size() + pool.size() + device.size() + 2);
  out.append(driver).append(1, '\n').append(pool).append(1, '\n').append(device);
  return out;
}

void AllocatedDevices::add(Holders& into, std::string key,
                           const std::vector<std::string>& holders) {
  std::vector<std::string>& known = into[std::move(key)];
  for (const std::string& uid : holders) {
    if (std::find(known.begin(), known.end(), uid) == known.end()) known.push_back(uid);
  }
}

void AllocatedDevices::addClaim(const ResourceClaim& claim) {
  if (!claim.allocated) return;
  std::vector<std::string> pods;
  for (const ClaimConsumer& consumer : claim.reservedFor) {
    if (consumer.resource == "pods" && !consumer.uid.empty()) pods.push_back(consumer.uid);
  }
  for (const AllocatedDevice& device : claim.devices) {
    if (device.adminAccess) continue;
    if (device.shared) {
      addShared(device.driver, device.pool, device.device, pods);
    } else {
      addExclusive(device.driver, device.pool, device.device, pods);
    }
  }
}

void AllocatedDevices::removeClaim(const ResourceClaim& claim) {
  if (!claim.allocated) return;
  for (const AllocatedDevice& device : claim.devices) {
    if (device.adminAccess) continue;
    Holders& from = device.shared ? shared_ : exclusive_;
    const auto it = from.find(key(device.driver, device.pool, device.device));
    if (it == from.end()) continue;
    if (!device.shared) {
      from.erase(it);
      continue;
    }
    // A shared device stays allocated while another claim's pods hold it.
    for (const ClaimConsumer& consumer : claim.reservedFor) {
      std::erase(it->second, consumer.uid);
    }
    if (it->second.empty()) from.erase(it);
  }
}

void AllocatedDevices::addExclusive(std::string_view driver, std::string_view pool,
                                    std::string_view device,
                                    const std::vector<std::string>& holders) {
  add(exclusive_, key(driver, pool, device), holders);
}

void AllocatedDevices::addShared(std::string_view driver, std::string_view pool,
                                 std::string_view device, const std::vector<std::string>& holders) {
  add(shared_, key(driver, pool, device), holders);
}

const std::vector<std::string>* AllocatedDevices::holders(std::string_view driver,
                                                          std::string_view pool,
                                                          std::string_view device) const {
  const std::string k = key(driver, pool, device);
  if (const auto it = exclusive_.find(k); it != exclusive_.end()) return &it->second;
  if (const auto it = shared_.find(k); it != shared_.end()) return &it->second;
  return nullptr;
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
