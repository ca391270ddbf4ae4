#pragma once
// One resource.k8s.io/v1 ResourceSlice as the structured allocator reads it: the driver, the pool
// (name, generation, slice count), which nodes it serves, and its devices with their attributes,
// capacities, counter consumption and taints; or, for a counters-only slice, its shared counter
// sets. Compact by construction: 5,000 GPU nodes keep theirs in memory, so the strings of a slice
// live once in one buffer (device_text.h) and devices hold ranges into flat arrays.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dra/consumable_capacity.h"
#include "dra/device_text.h"
#include "dra/node_selector.h"
#include "model/quantity.h"

namespace gte::dra {

// resource.k8s.io/v1 DeviceAttribute: exactly one of int, bool, string, version; the alpha list
// forms (ints, bools, strings, versions) are kept as kList, which no selector or constraint the
// extender evaluates can read.
enum class ValueKind : std::uint8_t { kString, kInt, kBool, kVersion, kList };

struct AttributeValue {
  ValueKind kind = ValueKind::kString;
  std::int64_t integer = 0;  // kInt; kBool: 0 or 1
  std::string_view text;     // kString and kVersion (a semantic version as published)
};

enum class TaintEffect : std::uint8_t { kNone, kNoSchedule, kNoExecute, kOther };
// A taint's `effect` as written: "NoSchedule", "NoExecute", "None"; anything else is kOther
// (an effect this reader predates, which the allocator treats like None).
TaintEffect parseTaintEffect(std::string_view effect) noexcept;

struct Range {
  std::uint32_t first = 0;
  std::uint32_t count = 0;
};

// Which nodes a slice (or, with perDeviceNodeSelection, a device) serves: exactly one of the three.
struct NodeSelection {
  std::string nodeName;
  bool allNodes = false;
  std::optional<NodeSelector> nodeSelector;
  bool any() const noexcept { return !nodeName.empty() || allNodes || nodeSelector.has_value(); }
};

// 16 bytes: a slice of 8 GPUs holds about 90 of them.
struct StoredAttribute {
  // The name as published: "uuid" (the driver's domain) or "resource.kubernetes.io/pciBusID".
  std::uint32_t nameOffset = 0;
  std::uint16_t nameLength = 0;
  ValueKind kind = ValueKind::kString;
  std::int64_t value = 0;  // kInt, kBool; kString/kVersion: TextRef packed offset << 32 | length

  TextRef name() const noexcept { return TextRef{nameOffset, nameLength}; }
};

struct StoredQuantity {
  TextRef name;
  std::int32_t policy = -1;  // a capacity's requestPolicy, into ResourceSlice::requestPolicies
  Quantity value;
};

struct CounterGroup {  // a shared counter set, or one device's consumption of one
  TextRef counterSet;
  Range counters;  // into ResourceSlice::quantities
};

struct StoredTaint {
  TextRef key;
  TextRef value;
  TaintEffect effect = TaintEffect::kNone;
};

struct Device {
  TextRef name;
  Range attributes;                 // into ResourceSlice::attributes
  Range capacity;                   // into ResourceSlice::quantities
  Range consumesCounters;           // into ResourceSlice::counterGroups
  Range taints;                     // into ResourceSlice::taints
  std::int32_t nodeSelection = -1;  // into deviceSelections (perDeviceNodeSelection)
  bool allowMultipleAllocations = false;
  bool bindingConditions = false;    // declares bindingConditions
  bool compatibilityGroups = false;  // a consumesCounters entry names compatibilityGroups
};

struct ResourceSlice {
  std::string name;
  std::string resourceVersion;  // metadata.resourceVersion (a watch resumes from it)
  std::string driver;
  std::string pool;
  std::int64_t generation = 0;
  std::int64_t resourceSliceCount = 0;
  NodeSelection selection;
  bool perDeviceNodeSelection = false;
  // spec.skipNodeOperations is not empty (DRAOptionalNodeOperations): the scheduler allocates its
  // devices only on nodes that declare the feature (NodeInfo::declaresDraOptionalNodeOperations).
  bool skipNodeOperations = false;
  std::vector<Device> devices;
  Range sharedCounters;  // into counterGroups
  std::vector<StoredAttribute> attributes;
  std::vector<StoredQuantity> quantities;  // capacities and counter values
  std::vector<CapacityRequestPolicy> requestPolicies;
  std::vector<CounterGroup> counterGroups;
  std::vector<StoredTaint> taints;
  std::vector<NodeSelection> deviceSelections;
  // The distinct attribute names of the slice's devices: a lookup by name resolves the name here
  // once, then compares offsets (every copy of a name is the same string in `text`).
  std::vector<TextRef> attributeNames;
  TextBuffer text;

  std::string_view view(TextRef ref) const noexcept { return text.view(ref); }
  std::string_view deviceName(std::uint32_t device) const noexcept {
    return view(devices[device].name);
  }
  AttributeValue valueOf(const StoredAttribute& attribute) const noexcept;
  // The stored name equal to `name`, if any device has an attribute of that name.
  std::optional<TextRef> attributeName(std::string_view wanted) const noexcept;
  // Heap bytes held (for the memory figures in docs/dra.md).
  std::size_t heapBytes() const noexcept;
};

using ResourceSliceConstSharedPtr = std::shared_ptr<const ResourceSlice>;

}  // namespace gte::dra
