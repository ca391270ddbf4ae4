#pragma once
// Consumable capacity (resource.k8s.io/v1, the DRAConsumableCapacity and
// DRAFractionalCapacityRange gates, both on by default in kube-scheduler 1.37): what a request's
// `capacity.requests` consumes of a device, rounded by each capacity's `requestPolicy`, and
// whether it still fits beside what other shares of the device consume. The allocator runs this
// check on every device, shared or not; a device that allows multiple allocations is then not
// taken exclusively but shared by each request that fits. The rules are those of the scheduler's
// incubating allocator (docs/dra.md, "Consumable capacity"), in exact arithmetic.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/quantity.h"
#include "model/resource_list.h"

namespace gte::dra {

struct ResourceSlice;
struct Device;

// A capacity's requestPolicy: at most one of validValues and validRange applies (the API's
// rule); a range always has a minimum and a positive step (the slice reader refuses others).
struct CapacityRequestPolicy {
  std::optional<Quantity> defaultValue;
  std::vector<Quantity> validValues;  // ascending, as the API requires
  bool hasRange = false;
  Quantity rangeMin;
  std::optional<Quantity> rangeMax;
  std::optional<Quantity> rangeStep;
  friend bool operator==(const CapacityRequestPolicy&, const CapacityRequestPolicy&) = default;
};

enum class CapacityFit : std::uint8_t {
  kFits,
  kNoFit,  // the allocator skips the device
  kError,  // the allocator aborts: a request it cannot represent, a negative consumption
};

// `requests` is a request's capacity.requests (empty: it names none).
//
// What one request consumes of each of the device's capacities, in the device's capacity order:
// the request's amount rounded up by the policy (a valid value, or min + a multiple of step), or
// the policy's default (else the whole capacity) for a capacity the request does not name.
// On kError, `why` says which capacity and why.
struct CapacityUse {
  CapacityFit fit = CapacityFit::kFits;
  std::vector<Quantity> consumed;
  std::string why;
};
CapacityUse consumedByRequest(const ResourceSlice& slice, const Device& device,
                              const ResourceList& requests);

// The allocator's capacity check: the request names only capacities the device has, each amount
// it consumes obeys the policy, and with `inUse` (per capacity, in the device's order; empty:
// nothing) it stays within the capacity's value.
CapacityUse checkCapacity(const ResourceSlice& slice, const Device& device,
                          const ResourceList& requests, std::span<const Quantity> inUse);

// Whether the device's capacities carry no request policy: then a request that names no capacity
// always fits an unshared device, and the check can be skipped.
bool capacityWithoutPolicies(const ResourceSlice& slice, const Device& device) noexcept;

}  // namespace gte::dra
