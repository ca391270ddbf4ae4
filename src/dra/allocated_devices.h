#pragma once
// The devices the allocator counts as taken, from every ResourceClaim's status.allocation (all
// namespaces) and the allocations in flight the extender knows of (its own predictions for pods
// between bind and the claim watch): exclusive results mark a device in use; results with a
// shareID (consumable capacity) consume its counters once and add their consumedCapacity to what
// the device's shares consume; results with adminAccess count for nothing, as in the scheduler's
// allocated state.
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dra/resource_claim.h"
#include "model/resource_list.h"

namespace gte::dra {

// One allocated share of a device that allows multiple allocations.
struct DeviceShare {
  std::string claim;                 // "namespace/name" of the claim holding it ("" unknown)
  std::vector<std::string> holders;  // the UIDs of the pods that claim is reserved for
  ResourceList consumed;             // its consumedCapacity
};

class AllocatedDevices {
 public:
  // The claim's non-admin results; the pods it is reserved for become the devices' holders.
  void addClaim(const ResourceClaim& claim);
  // Undoes addClaim for the claim as it was added (its allocation released or the claim gone).
  void removeClaim(const ResourceClaim& claim);
  void addExclusive(std::string_view driver, std::string_view pool, std::string_view device,
                    const std::vector<std::string>& holders = {});
  // One share of the device, consuming `consumed` of its capacities.
  void addShared(std::string_view driver, std::string_view pool, std::string_view device,
                 const std::vector<std::string>& holders = {}, const ResourceList& consumed = {},
                 std::string claim = {});

  // In use: no other claim may have it.
  bool exclusive(std::string_view driver, std::string_view pool, std::string_view device) const;
  // Allocated either way: its counters are consumed.
  bool allocated(std::string_view driver, std::string_view pool, std::string_view device) const;
  // The device's allocated shares; null when none is.
  const std::vector<DeviceShare>* shares(std::string_view driver, std::string_view pool,
                                         std::string_view device) const;
  // The UIDs of the pods the claim holding the device exclusively is reserved for (preempt's
  // what-if frees a device when all of them are victims); null when not allocated exclusively.
  const std::vector<std::string>* holders(std::string_view driver, std::string_view pool,
                                          std::string_view device) const;
  std::size_t size() const noexcept { return exclusive_.size() + shared_.size(); }

 private:
  static std::string key(std::string_view driver, std::string_view pool, std::string_view device);
  using Holders = std::unordered_map<std::string, std::vector<std::string>>;
  static void add(std::vector<std::string>& into, const std::vector<std::string>& holders);
  Holders exclusive_;
  // A device counts as allocated while one of its shares is left.
  std::unordered_map<std::string, std::vector<DeviceShare>> shared_;
};

}  // namespace gte::dra
