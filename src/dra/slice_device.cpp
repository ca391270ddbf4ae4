#include "dra/slice_device.h"

#include "dra/semver.h"

namespace gte::dra {

QualifiedName splitQualifiedName(std::string_view name, std::string_view driver) noexcept {
  const std::size_t slash = name.find('/');
  if (slash == std::string_view::npos) return {driver, name};
  return {name.substr(0, slash), name.substr(slash + 1)};
}

std::optional<AttributeValue> SliceDevice::celAttribute(std::string_view domain,
                                                        std::string_view id) const noexcept {
  const Range range = device().attributes;
  for (std::uint32_t i = range.first; i < range.first + range.count; ++i) {
    const StoredAttribute& attribute = slice_->attributes[i];
    const QualifiedName name = splitQualifiedName(slice_->view(attribute.name()), driver());
    if (name.domain == domain && name.id == id) return slice_->valueOf(attribute);
  }
  return std::nullopt;
}

const Quantity* SliceDevice::celCapacity(std::string_view domain,
                                         std::string_view id) const noexcept {
  const Range range = device().capacity;
  for (std::uint32_t i = range.first; i < range.first + range.count; ++i) {
    const StoredQuantity& capacity = slice_->quantities[i];
    const QualifiedName name = splitQualifiedName(slice_->view(capacity.name), driver());
    if (name.domain == domain && name.id == id) return &capacity.value;
  }
  return nullptr;
}

std::optional<AttributeValue> SliceDevice::qualifiedAttribute(
    std::string_view name) const noexcept {
  const Range range = device().attributes;
  const auto find = [&](std::string_view key) -> std::optional<AttributeValue> {
    for (std::uint32_t i = range.first; i < range.first + range.count; ++i) {
      const StoredAttribute& attribute = slice_->attributes[i];
      if (slice_->view(attribute.name()) == key) return slice_->valueOf(attribute);
    }
    return std::nullopt;
  };
  if (auto exact = find(name)) return exact;
  const std::size_t slash = name.find('/');
  if (slash == std::string_view::npos || name.substr(0, slash) != driver()) return std::nullopt;
  return find(name.substr(slash + 1));
}

SliceDevice::QualifiedLookup SliceDevice::QualifiedLookup::resolve(const ResourceSlice& slice,
                                                                   std::string_view name) noexcept {
  QualifiedLookup lookup;
  lookup.exact = slice.attributeName(name);
  const std::size_t slash = name.find('/');
  if (slash != std::string_view::npos && name.substr(0, slash) == slice.driver) {
    lookup.inDriverDomain = slice.attributeName(name.substr(slash + 1));
  }
  return lookup;
}

std::optional<AttributeValue> SliceDevice::qualifiedAttribute(
    const QualifiedLookup& lookup) const noexcept {
  const Range range = device().attributes;
  for (const std::optional<TextRef>& name : {lookup.exact, lookup.inDriverDomain}) {
    if (!name) continue;
    for (std::uint32_t i = range.first; i < range.first + range.count; ++i) {
      const StoredAttribute& attribute = slice_->attributes[i];
      if (attribute.nameOffset == name->offset && attribute.nameLength == name->length) {
        return slice_->valueOf(attribute);
      }
    }
  }
  return std::nullopt;
}

bool SliceDevice::hasMalformedVersion() const noexcept {
  const Range range = device().attributes;
  for (std::uint32_t i = range.first; i < range.first + range.count; ++i) {
    const StoredAttribute& attribute = slice_->attributes[i];
    if (attribute.kind == ValueKind::kVersion &&
        !parseSemVer(slice_->valueOf(attribute).text).has_value()) {
      return true;
    }
  }
  return false;
}

}  // namespace gte::dra
