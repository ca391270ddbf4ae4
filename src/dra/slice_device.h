#pragma once
// One device of a ResourceSlice, read the two ways the allocator reads attributes: as CEL sees
// them (`device.attributes[domain][id]`, an unqualified name belonging to the driver's domain) and
// as a matchAttribute/distinctAttribute constraint looks one up (the fully qualified name as
// published first, then the bare id when the domain is the driver's).
#include <cstdint>
#include <optional>
#include <string_view>

#include "dra/resource_slice.h"

namespace gte::dra {

class SliceDevice {
 public:
  SliceDevice(const ResourceSlice& slice, std::uint32_t index) noexcept
      : slice_(&slice), index_(index) {}

  const ResourceSlice& slice() const noexcept { return *slice_; }
  std::uint32_t index() const noexcept { return index_; }
  const Device& device() const noexcept { return slice_->devices[index_]; }
  std::string_view driver() const noexcept { return slice_->driver; }
  std::string_view name() const noexcept { return slice_->view(device().name); }

  // CEL: `device.attributes['<domain>'].<id>` (nullopt: no such key).
  std::optional<AttributeValue> celAttribute(std::string_view domain,
                                             std::string_view id) const noexcept;
  // CEL: `device.capacity['<domain>'].<id>`.
  const Quantity* celCapacity(std::string_view domain, std::string_view id) const noexcept;
  // A constraint's attribute, by its fully qualified name ("resource.kubernetes.io/pcieRoot",
  // "gpu.nvidia.com/uuid").
  std::optional<AttributeValue> qualifiedAttribute(std::string_view name) const noexcept;
  // The same with the name resolved in this device's slice: `exact` the stored name equal to the
  // full name, `inDriverDomain` the one equal to its id when its domain is the driver's
  // (QualifiedLookup::resolve). Compares offsets only: for lookups repeated over devices.
  struct QualifiedLookup {
    std::optional<TextRef> exact;
    std::optional<TextRef> inDriverDomain;
    static QualifiedLookup resolve(const ResourceSlice& slice, std::string_view name) noexcept;
  };
  std::optional<AttributeValue> qualifiedAttribute(const QualifiedLookup& lookup) const noexcept;
  // True when some version attribute does not parse as a semantic version: CEL builds every
  // attribute before it evaluates, so every expression on such a device fails to evaluate.
  bool hasMalformedVersion() const noexcept;

 private:
  const ResourceSlice* slice_;
  std::uint32_t index_;
};

// The domain and id of a published name; names without '/' belong to `driver`.
struct QualifiedName {
  std::string_view domain;
  std::string_view id;
};
QualifiedName splitQualifiedName(std::string_view name, std::string_view driver) noexcept;

}  // namespace gte::dra
