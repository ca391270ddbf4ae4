#include "dra/consumable_capacity.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "dra/resource_slice.h"

namespace gte::dra {
namespace {

constexpr Int128 kInt64Max = std::numeric_limits<std::int64_t>::max();

const CapacityRequestPolicy* policyOf(const ResourceSlice& slice, const StoredQuantity& capacity) {
  if (capacity.policy < 0) return nullptr;
  return &slice.requestPolicies[static_cast<std::size_t>(capacity.policy)];
}

// The allocator's useMilli: the fractional gate is on, so thousandths are used when every bound
// the range sets is exact in thousandths and the step is at least one of them.
bool useMillis(const CapacityRequestPolicy& policy) {
  if (!policy.rangeMin.exactMillis()) return false;
  if (policy.rangeMax && !policy.rangeMax->exactMillis()) return false;
  if (policy.rangeStep) {
    const auto step = policy.rangeStep->exactMillis();
    if (!step || *step < 1) return false;
  }
  return true;
}

struct Rounded {
  std::optional<Quantity> value;  // nullopt: not representable
};

// A value and the range's step and minimum in the unit the allocator counts the range in:
// thousandths (useMillis) or whole units rounded up. nullopt: the value is not exact in
// thousandths where the range counts in them.
struct RangeTerms {
  Int128 value = 0;
  Int128 step = 0;  // >= 1: the reader refuses other steps
  Int128 min = 0;
};

std::optional<RangeTerms> rangeTerms(const Quantity& value, const CapacityRequestPolicy& policy) {
  if (useMillis(policy)) {
    const auto millis = value.exactMillis();
    if (!millis) return std::nullopt;
    return RangeTerms{*millis, *policy.rangeStep->exactMillis(), *policy.rangeMin.exactMillis()};
  }
  return RangeTerms{value.ceilUnits(), policy.rangeStep->ceilUnits(), policy.rangeMin.ceilUnits()};
}

// roundUpRange: below the minimum, the minimum; else min + the least multiple of step that
// reaches the request.
Rounded roundUpRange(const Quantity& request, const CapacityRequestPolicy& policy) {
  if (request < policy.rangeMin) return {policy.rangeMin};
  if (!policy.rangeStep) return {request};
  const bool millis = useMillis(policy);
  if (!millis && request > Quantity::fromUnits(std::numeric_limits<std::int64_t>::max())) return {};
  const std::optional<RangeTerms> terms = rangeTerms(request, policy);
  if (!terms) return {};
  const Int128 added = terms->value - terms->min;
  Int128 n = added / terms->step;
  if (added % terms->step != 0) ++n;
  // min + step * n must stay within int64.
  if (n > (kInt64Max - terms->min) / terms->step) return {};
  const auto rounded = static_cast<std::int64_t>(terms->min + terms->step * n);
  return {millis ? Quantity::fromMillis(rounded) : Quantity::fromUnits(rounded)};
}

// roundUpValidValues: the first valid value at or above the request, else the request itself
// (which the policy check then refuses).
Quantity roundUpValidValues(const Quantity& request, const std::vector<Quantity>& values) {
  for (const Quantity& value : values) {
    if (request <= value) return value;
  }
  return request;
}

bool violatesRange(const Quantity& value, const CapacityRequestPolicy& policy) {
  if (policy.rangeMax && value > *policy.rangeMax) return true;
  if (!policy.rangeStep) return false;
  const std::optional<RangeTerms> terms = rangeTerms(value, policy);
  return !terms || (terms->value - terms->min) % terms->step != 0;
}

// violatesPolicy. The allocator compares the default by representation; equal values compare
// equal here, which differs only for a default the API would refuse.
bool violatesPolicy(const Quantity& value, const CapacityRequestPolicy* policy) {
  if (policy == nullptr) return false;
  if (policy->defaultValue && value == *policy->defaultValue) return false;
  if (policy->hasRange) return violatesRange(value, *policy);
  if (!policy->validValues.empty()) {
    return std::find(policy->validValues.begin(), policy->validValues.end(), value) ==
           policy->validValues.end();
  }
  return false;
}

CapacityUse error(std::string why) {
  CapacityUse out;
  out.fit = CapacityFit::kError;
  out.why = std::move(why);
  return out;
}

}  // namespace

CapacityUse consumedByRequest(const ResourceSlice& slice, const Device& device,
                              const ResourceList& requests) {
  CapacityUse out;
  out.consumed.reserve(device.capacity.count);
  for (std::uint32_t c = device.capacity.first; c < device.capacity.first + device.capacity.count;
       ++c) {
    const StoredQuantity& capacity = slice.quantities[c];
    const std::string_view name = slice.view(capacity.name);
    const CapacityRequestPolicy* policy = policyOf(slice, capacity);
    const Quantity* request = requests.find(name);
    Quantity consumed = capacity.value;
    if (request == nullptr) {
      if (policy != nullptr && policy->defaultValue) consumed = *policy->defaultValue;
    } else if (policy != nullptr && policy->hasRange) {
      const Rounded rounded = roundUpRange(*request, *policy);
      if (!rounded.value) {
        return error("capacity \"" + std::string(name) +
                     "\": the request cannot be represented in the device's range arithmetic");
      }
      consumed = *rounded.value;
    } else if (policy != nullptr && !policy->validValues.empty()) {
      consumed = roundUpValidValues(*request, policy->validValues);
    } else {
      consumed = *request;
    }
    if (consumed.isNegative()) {
      return error("capacity \"" + std::string(name) + "\": capacity value is negative");
    }
    out.consumed.push_back(consumed);
  }
  return out;
}

CapacityUse checkCapacity(const ResourceSlice& slice, const Device& device,
                          const ResourceList& requests, std::span<const Quantity> inUse) {
  for (const auto& [name, amount] : requests.entries()) {
    bool found = false;
    for (std::uint32_t c = device.capacity.first;
         c < device.capacity.first + device.capacity.count && !found; ++c) {
      found = slice.view(slice.quantities[c].name) == name;
    }
    if (!found) return CapacityUse{CapacityFit::kNoFit, {}, {}};
  }
  CapacityUse use = consumedByRequest(slice, device, requests);
  if (use.fit != CapacityFit::kFits) return use;
  for (std::uint32_t i = 0; i < device.capacity.count; ++i) {
    const StoredQuantity& capacity = slice.quantities[device.capacity.first + i];
    if (violatesPolicy(use.consumed[i], policyOf(slice, capacity))) {
      use.fit = CapacityFit::kNoFit;
      return use;
    }
    const Quantity total = i < inUse.size() ? use.consumed[i] + inUse[i] : use.consumed[i];
    if (total > capacity.value) {
      use.fit = CapacityFit::kNoFit;
      return use;
    }
  }
  return use;
}

bool capacityWithoutPolicies(const ResourceSlice& slice, const Device& device) noexcept {
  for (std::uint32_t c = device.capacity.first; c < device.capacity.first + device.capacity.count;
       ++c) {
    if (slice.quantities[c].policy >= 0) return false;
  }
  return true;
}

}  // namespace gte::dra
