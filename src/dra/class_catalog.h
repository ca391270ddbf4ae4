#pragma once
// The cluster's DeviceClasses with their selectors compiled (cel_program.h), and which class backs
// each extended resource (KEP-5004): a class's `extendedResourceName`, where two classes name the
// same resource the newer one (by creationTimestamp; on a tie the lower name), plus the implicit
// `deviceclass.resource.kubernetes.io/<class>` every class backs. Immutable once built: the
// snapshot holds one, and every DRA node's precomputed class matches refer to its indices.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dra/cel_program.h"
#include "dra/device_class.h"
#include "dra/node_devices.h"

namespace gte::dra {

struct CompiledClass {
  DeviceClassConstSharedPtr object;
  std::vector<CelProgram> selectors;
  // Why the extender cannot evaluate this class (a selector outside the CEL subset, a selector
  // kind it predates); empty when it can. Requests of such a class are passed through.
  std::string uninterpretable;
};

class ClassCatalog {
 public:
  ClassCatalog() = default;
  explicit ClassCatalog(std::vector<DeviceClassConstSharedPtr> classes);

  // -1 when there is no class of that name.
  int find(std::string_view name) const noexcept;
  const CompiledClass& at(int index) const { return classes_[static_cast<std::size_t>(index)]; }
  std::size_t size() const noexcept { return classes_.size(); }
  // The class the scheduler turns requests for `resource` into claims of; -1 when none.
  int forExtendedResource(std::string_view resource) const noexcept;

 private:
  std::vector<CompiledClass> classes_;  // sorted by name
};

using ClassCatalogConstSharedPtr = std::shared_ptr<const ClassCatalog>;

// Per device of the node (in device order), per class of the catalog: whether the class's
// selectors select it (kTrue/kFalse), fail on it (kError) or cannot be evaluated
// (kUninterpretable). Class selectors depend on nothing but the device, so the snapshot computes
// this once per change. Packed two bits per class in one word per device for the first 32 classes
// (a request reads one word per device it tries), in `overflow` beyond.
struct ClassMatches {
  static constexpr int kPacked = 32;
  std::vector<std::uint64_t> packed;              // per device
  std::vector<std::vector<CelOutcome>> overflow;  // [class - 32][device]

  CelOutcome at(int classIndex, std::size_t device) const noexcept {
    if (classIndex < kPacked) {
      return static_cast<CelOutcome>((packed[device] >> (2 * classIndex)) & 3u);
    }
    return overflow[static_cast<std::size_t>(classIndex - kPacked)][device];
  }
};
ClassMatches matchClasses(const NodeDevices& devices, const ClassCatalog& catalog);

}  // namespace gte::dra
