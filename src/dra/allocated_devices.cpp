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

void AllocatedDevices::add(std::vector<std::string>& known,
                           const std::vector<std::string>& holders) {
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
      addShared(device.driver, device.pool, device.device, pods, device.consumedCapacity,
                claim.ns + "/" + claim.name);
    } else {
      addExclusive(device.driver, device.pool, device.device, pods);
    }
  }
}

void AllocatedDevices::removeClaim(const ResourceClaim& claim) {
  if (!claim.allocated) return;
  for (const AllocatedDevice& device : claim.devices) {
    if (device.adminAccess) continue;
    const std::string k = key(device.driver, device.pool, device.device);
    if (!device.shared) {
      exclusive_.erase(k);
      continue;
    }
    const auto it = shared_.find(k);
    if (it == shared_.end()) continue;
    // This claim's share goes; the device stays allocated while another is left.
    std::vector<DeviceShare>& shares = it->second;
    const std::string id = claim.ns + "/" + claim.name;
    const auto share = std::find_if(shares.begin(), shares.end(), [&](const DeviceShare& s) {
      return s.claim == id && s.consumed == device.consumedCapacity;
    });
    if (share != shares.end()) shares.erase(share);
    if (shares.empty()) shared_.erase(it);
  }
}

void AllocatedDevices::addExclusive(std::string_view driver, std::string_view pool,
                                    std::string_view device,
                                    const std::vector<std::string>& holders) {
  add(exclusive_[key(driver, pool, device)], holders);
}

void AllocatedDevices::addShared(std::string_view driver, std::string_view pool,
                                 std::string_view device, const std::vector<std::string>& holders,
                                 const ResourceList& consumed, std::string claim) {
  DeviceShare share;
  share.claim = std::move(claim);
  add(share.holders, holders);
  share.consumed = consumed;
  shared_[key(driver, pool, device)].push_back(std::move(share));
}

const std::vector<DeviceShare>* AllocatedDevices::shares(std::string_view driver,
                                                         std::string_view pool,
                                                         std::string_view device) const {
  const auto it = shared_.find(key(driver, pool, device));
  return it == shared_.end() ? nullptr : &it->second;
}

const std::vector<std::string>* AllocatedDevices::holders(std::string_view driver,
                                                          std::string_view pool,
                                                          std::string_view device) const {
  const auto it = exclusive_.find(key(driver, pool, device));
  return it == exclusive_.end() ? nullptr : &it->second;
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
