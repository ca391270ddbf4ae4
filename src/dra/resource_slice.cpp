#include "dra/resource_slice.h"

namespace gte::dra {

TaintEffect parseTaintEffect(std::string_view effect) noexcept {
  if (effect == "NoSchedule") return TaintEffect::kNoSchedule;
  if (effect == "NoExecute") return TaintEffect::kNoExecute;
  if (effect == "None") return TaintEffect::kNone;
  return TaintEffect::kOther;
}

AttributeValue ResourceSlice::valueOf(const StoredAttribute& attribute) const noexcept {
  AttributeValue out;
  out.kind = attribute.kind;
  if (attribute.kind == ValueKind::kString || attribute.kind == ValueKind::kVersion) {
    const auto packed = static_cast<std::uint64_t>(attribute.value);
    out.text = view(TextRef{static_cast<std::uint32_t>(packed >> 32),
                            static_cast<std::uint32_t>(packed & 0xffffffffu)});
  } else {
    out.integer = attribute.value;
  }
  return out;
}

std::optional<TextRef> ResourceSlice::attributeName(std::string_view wanted) const noexcept {
  for (const TextRef ref : attributeNames) {
    if (view(ref) == wanted) return ref;
  }
  return std::nullopt;
}

std::size_t ResourceSlice::heapBytes() const noexcept {
  const auto strings = [](const std::string& s) { return s.capacity() > 15 ? s.capacity() : 0; };
  std::size_t bytes =
      strings(name) + strings(resourceVersion) + strings(driver) + strings(pool) + text.bytes();
  bytes += devices.capacity() * sizeof(Device);
  bytes += attributes.capacity() * sizeof(StoredAttribute);
  bytes += quantities.capacity() * sizeof(StoredQuantity);
  bytes += counterGroups.capacity() * sizeof(CounterGroup);
  bytes += taints.capacity() * sizeof(StoredTaint);
  bytes += deviceSelections.capacity() * sizeof(NodeSelection);
  bytes += attributeNames.capacity() * sizeof(TextRef);
  bytes += requestPolicies.capacity() * sizeof(CapacityRequestPolicy);
  for (const CapacityRequestPolicy& policy : requestPolicies) {
    bytes += policy.validValues.capacity() * sizeof(Quantity);
  }
  return bytes;
}

}  // namespace gte::dra
