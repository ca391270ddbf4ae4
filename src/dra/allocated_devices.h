#pragma once
// The devices the allocator counts as taken, from every ResourceClaim's status.allocation (all
// namespaces) and the allocations in flight the extender knows of (its own predictions for pods
// between bind and the claim watch): exclusive results mark a device in use; results with a
// shareID (consumable capacity) only consume its counters; results with adminAccess count for
// nothing, as in the scheduler's allocated state.
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dra/resource_claim.h"

namespace gte::dra {

class AllocatedDevices {
 public:
  // The claim's non-admin results; the pods it is reserved for become the devices' holders.
  void addClaim(const ResourceClaim& claim);
  // Undoes addClaim for the claim as it was added (its allocation released or the claim gone).
  void removeClaim(const ResourceClaim& claim);
  void addExclusive(std::string_view driver, std::string_view pool, std::string_view device,
                    const std::vector<std::string>& holders = {});
  void addShared(std::string_view driver, std::string_view pool, std::string_view device,
                 const std::vector<std::string>& holders = {});

  // In use: no other claim may have it.
  bool exclusive(std::string_view driver, std::string_view pool, std::string_view device) const;
  // Allocated either way: its counters are consumed.
  bool allocated(std::string_view driver, std::string_view pool, std::string_view device) const;
  // The UIDs of the pods the claims holding the device are reserved for (preempt's what-if frees
  // a device when all of them are victims); empty when unknown or not allocated.
  const std::vector<std::string>* holders(std::string_view driver, std::string_view pool,
                                          std::string_view device) const;
  std::size_t size() const noexcept { return exclusive_.size() + shared_.size(); }

 private:
  static std::string key(std::string_view driver, std::string_view pool, std::string_view device);
  using Holders = std::unordered_map<std::string, std::vector<std::string>>;
  static void add(Holders& into, std::string key, const std::vector<std::string>& holders);
  Holders exclusive_;
  Holders shared_;
};

}  // namespace gte::dra
