#include "dra/resource_slice_json.h"

#include <algorithm>
#include <optional>

#include "dra/json_fields.h"

namespace gte::dra {
namespace {

using json::JsonReader;
using json::Kind;

// Fills one ResourceSlice; `where` is "ResourceSlice <name>" once metadata.name is known.
class SliceReader {
 public:
  SliceReader(JsonReader& r, ResourceSlice& slice) : r_(r), slice_(slice), text_(slice.text) {}

  Status read() {
    Status s = forEachKey(r_, "ResourceSlice", [&](const std::string& key) -> Status {
      if (key == "metadata") return readMetadata();
      if (key == "spec") return readSpec();
      return skipField(r_, where());
    });
    if (!s.ok()) return s;
    if (slice_.driver.empty()) return fieldError(where("spec.driver"), "missing");
    if (slice_.pool.empty()) return fieldError(where("spec.pool.name"), "missing");
    for (const StoredAttribute& attribute : slice_.attributes) {
      const TextRef name = attribute.name();
      if (std::find(slice_.attributeNames.begin(), slice_.attributeNames.end(), name) ==
          slice_.attributeNames.end()) {
        slice_.attributeNames.push_back(name);
      }
    }
    slice_.attributeNames.shrink_to_fit();
    text_.shrink();
    slice_.devices.shrink_to_fit();
    slice_.attributes.shrink_to_fit();
    slice_.quantities.shrink_to_fit();
    slice_.requestPolicies.shrink_to_fit();
    return Ok{};
  }

 private:
  std::string where(std::string_view field = {}) const {
    std::string out = "ResourceSlice";
    if (!slice_.name.empty()) {
      out += ' ';
      out += slice_.name;
    }
    if (!field.empty()) {
      out += ": ";
      out += field;
    }
    return out;
  }

  Status readMetadata() {
    ObjectMeta meta;
    if (Status s = readObjectMeta(r_, where("metadata"), meta); !s.ok()) return s;
    slice_.name = std::move(meta.name);
    slice_.resourceVersion = std::move(meta.resourceVersion);
    return Ok{};
  }

  Status readSpec() {
    return forEachKey(r_, where("spec"), [&](const std::string& key) -> Status {
      const std::string at = where("spec." + key);
      if (key == "driver") return readStringField(r_, at, slice_.driver);
      if (key == "pool") return readPool(at);
      if (key == "nodeName") return readStringField(r_, at, slice_.selection.nodeName);
      if (key == "allNodes") return readBoolField(r_, at, slice_.selection.allNodes);
      if (key == "nodeSelector") return readSelector(at, slice_.selection);
      if (key == "perDeviceNodeSelection") {
        return readBoolField(r_, at, slice_.perDeviceNodeSelection);
      }
      if (key == "devices") return readDevices(at);
      if (key == "sharedCounters") return readSharedCounters(at);
      if (key == "skipNodeOperations") {
        std::vector<std::string> operations;
        if (Status read = readStringList(r_, at, operations); !read.ok()) return read;
        slice_.skipNodeOperations = !operations.empty();
        return Ok{};
      }
      return skipField(r_, at);
    });
  }

  Status readSelector(const std::string& at, NodeSelection& selection) {
    if (r_.peek() == Kind::kNull) return skipField(r_, at);
    NodeSelector selector;
    if (Status s = readNodeSelector(r_, at, selector); !s.ok()) return s;
    selection.nodeSelector = std::move(selector);
    return Ok{};
  }

  Status readPool(const std::string& at) {
    return forEachKey(r_, at, [&](const std::string& key) -> Status {
      if (key == "name") return readStringField(r_, dotted(at, key), slice_.pool);
      if (key == "generation") return readIntField(r_, dotted(at, key), slice_.generation);
      if (key == "resourceSliceCount") {
        return readIntField(r_, dotted(at, key), slice_.resourceSliceCount);
      }
      return skipField(r_, at);
    });
  }

  Status readDevices(const std::string& at) {
    return forEachElement(r_, at, [&](std::size_t i) -> Status {
      const std::string device = indexed(at, i);
      Device out;
      if (Status s = readDevice(device, out); !s.ok()) return s;
      if (out.name.length == 0) return fieldError(device + ".name", "missing");
      slice_.devices.push_back(out);
      return Ok{};
    });
  }

  Status readDevice(const std::string& at, Device& device) {
    NodeSelection selection;
    Status s = forEachKey(r_, at, [&](const std::string& key) -> Status {
      const std::string field = dotted(at, key);
      if (key == "name") return readText(field, device.name);
      if (key == "attributes") return readAttributes(field, device.attributes);
      if (key == "capacity") return readCapacity(field, device.capacity);
      if (key == "consumesCounters") return readConsumption(field, device);
      if (key == "taints") return readTaints(field, device.taints);
      if (key == "nodeName") return readStringField(r_, field, selection.nodeName);
      if (key == "allNodes") return readBoolField(r_, field, selection.allNodes);
      if (key == "nodeSelector") return readSelector(field, selection);
      if (key == "allowMultipleAllocations") {
        return readBoolField(r_, field, device.allowMultipleAllocations);
      }
      if (key == "bindingConditions") {
        std::vector<std::string> conditions;
        if (Status read = readStringList(r_, field, conditions); !read.ok()) return read;
        device.bindingConditions = !conditions.empty();
        return Ok{};
      }
      return skipField(r_, field);
    });
    if (!s.ok()) return s;
    if (selection.any()) {
      device.nodeSelection = static_cast<std::int32_t>(slice_.deviceSelections.size());
      slice_.deviceSelections.push_back(std::move(selection));
    }
    return Ok{};
  }

  Status readText(const std::string& at, TextRef& out) {
    std::string value;
    if (Status s = readStringField(r_, at, value); !s.ok()) return s;
    out = text_.intern(value);
    return Ok{};
  }

  static std::uint32_t size(std::size_t n) { return static_cast<std::uint32_t>(n); }

  Status readAttributes(const std::string& at, Range& range) {
    range.first = size(slice_.attributes.size());
    Status s = forEachKey(r_, at, [&](const std::string& name) -> Status {
      StoredAttribute attribute;
      if (name.size() > 0xffff) return fieldError(dotted(at, "<name>"), "longer than 65535");
      const TextRef ref = text_.intern(name);
      attribute.nameOffset = ref.offset;
      attribute.nameLength = static_cast<std::uint16_t>(ref.length);
      if (Status read = readAttributeValue(dotted(at, name), attribute); !read.ok()) return read;
      slice_.attributes.push_back(attribute);
      return Ok{};
    });
    range.count = size(slice_.attributes.size()) - range.first;
    return s;
  }

  // Exactly one of int, bool, string, version (or, alpha, one of the list forms).
  Status readAttributeValue(const std::string& at, StoredAttribute& attribute) {
    int values = 0;
    Status s = forEachKey(r_, at, [&](const std::string& key) -> Status {
      const std::string field = dotted(at, key);
      if (r_.peek() == Kind::kNull) return skipField(r_, field);
      if (key == "int" || key == "bool") {
        ++values;
        attribute.kind = key == "int" ? ValueKind::kInt : ValueKind::kBool;
        if (key == "int") return readIntField(r_, field, attribute.value);
        bool value = false;
        if (Status read = readBoolField(r_, field, value); !read.ok()) return read;
        attribute.value = value ? 1 : 0;
        return Ok{};
      }
      if (key == "string" || key == "version") {
        ++values;
        attribute.kind = key == "string" ? ValueKind::kString : ValueKind::kVersion;
        TextRef ref;
        if (Status read = readText(field, ref); !read.ok()) return read;
        attribute.value =
            static_cast<std::int64_t>(static_cast<std::uint64_t>(ref.offset) << 32 | ref.length);
        return Ok{};
      }
      if (key == "ints" || key == "bools" || key == "strings" || key == "versions") {
        ++values;
        attribute.kind = ValueKind::kList;
        return skipField(r_, field);
      }
      return skipField(r_, field);
    });
    if (!s.ok()) return s;
    if (values != 1) {
      return fieldError(
          at, "want exactly one of int, bool, string, version, got " + std::to_string(values));
    }
    return Ok{};
  }

  // {value: quantity} (a counter), or with `policy` set also {requestPolicy} (a capacity).
  Status readQuantity(const std::string& at, Quantity& out, std::int32_t* policy) {
    bool present = false;
    Status s = forEachKey(r_, at, [&](const std::string& key) -> Status {
      const std::string field = dotted(at, key);
      if (key == "requestPolicy" && policy != nullptr) return readRequestPolicy(field, *policy);
      if (key != "value") return skipField(r_, field);
      if (Status read = readQuantityValue(r_, field, out); !read.ok()) return read;
      present = true;
      return Ok{};
    });
    if (!s.ok()) return s;
    if (!present) return fieldError(at + ".value", "missing");
    return Ok{};
  }

  Status readPolicyQuantity(const std::string& at, std::optional<Quantity>& out) {
    if (r_.peek() == Kind::kNull) return skipField(r_, at);
    Quantity value;
    if (Status read = readQuantityValue(r_, at, value); !read.ok()) return read;
    out = value;
    return Ok{};
  }

  // A capacity's requestPolicy: default, and validValues or validRange {min, max, step}. What the
  // API refuses and the allocator would divide by or dereference (a range without min, a step
  // that is not positive, both forms at once) makes the slice unreadable.
  Status readRequestPolicy(const std::string& at, std::int32_t& index) {
    if (r_.peek() == Kind::kNull) return skipField(r_, at);
    CapacityRequestPolicy policy;
    bool valuesSet = false;
    Status s = forEachKey(r_, at, [&](const std::string& key) -> Status {
      const std::string field = dotted(at, key);
      if (key == "default") return readPolicyQuantity(field, policy.defaultValue);
      if (key == "validValues") {
        if (r_.peek() == Kind::kNull) return skipField(r_, field);
        valuesSet = true;
        return forEachElement(r_, field, [&](std::size_t i) -> Status {
          std::optional<Quantity> value;
          if (Status read = readPolicyQuantity(indexed(field, i), value); !read.ok()) return read;
          if (!value) return fieldError(indexed(field, i), "null");
          if (!policy.validValues.empty() && *value <= policy.validValues.back()) {
            return fieldError(indexed(field, i), "not in ascending order");
          }
          policy.validValues.push_back(*value);
          return Ok{};
        });
      }
      if (key == "validRange") return readRange(field, policy);
      return skipField(r_, field);
    });
    if (!s.ok()) return s;
    if (valuesSet && policy.hasRange) {
      return fieldError(at, "sets both validValues and validRange");
    }
    index = static_cast<std::int32_t>(slice_.requestPolicies.size());
    slice_.requestPolicies.push_back(std::move(policy));
    return Ok{};
  }

  Status readRange(const std::string& at, CapacityRequestPolicy& policy) {
    if (r_.peek() == Kind::kNull) return skipField(r_, at);
    std::optional<Quantity> min;
    Status s = forEachKey(r_, at, [&](const std::string& key) -> Status {
      const std::string field = dotted(at, key);
      if (key == "min") return readPolicyQuantity(field, min);
      if (key == "max") return readPolicyQuantity(field, policy.rangeMax);
      if (key == "step") return readPolicyQuantity(field, policy.rangeStep);
      return skipField(r_, field);
    });
    if (!s.ok()) return s;
    if (!min) return fieldError(at + ".min", "missing");
    if (policy.rangeStep && (policy.rangeStep->isZero() || policy.rangeStep->isNegative())) {
      return fieldError(at + ".step", "not positive");
    }
    policy.hasRange = true;
    policy.rangeMin = *min;
    return Ok{};
  }

  // A map of name -> {value: quantity}: capacities and counters alike.
  Status readQuantities(const std::string& at, Range& range, bool policies = false) {
    range.first = size(slice_.quantities.size());
    Status s = forEachKey(r_, at, [&](const std::string& name) -> Status {
      StoredQuantity quantity;
      quantity.name = text_.intern(name);
      if (Status read =
              readQuantity(dotted(at, name), quantity.value, policies ? &quantity.policy : nullptr);
          !read.ok()) {
        return read;
      }
      slice_.quantities.push_back(quantity);
      return Ok{};
    });
    range.count = size(slice_.quantities.size()) - range.first;
    return s;
  }

  Status readCapacity(const std::string& at, Range& range) {
    return readQuantities(at, range, true);
  }

  // A list of {<nameKey>: ..., counters: {...}}: shared counter sets (nameKey "name") and a
  // device's consumption (nameKey "counterSet"). Groups are stored in order, contiguously.
  Status readCounterGroups(const std::string& at, std::string_view nameKey, Range& range,
                           bool* compatibilityGroups) {
    std::vector<CounterGroup> groups;
    Status s = forEachElement(r_, at, [&](std::size_t i) -> Status {
      const std::string item = indexed(at, i);
      CounterGroup group;
      Status read = forEachKey(r_, item, [&](const std::string& key) -> Status {
        const std::string field = dotted(item, key);
        if (key == nameKey) return readText(field, group.counterSet);
        if (key == "counters") return readQuantities(field, group.counters);
        if (key == "compatibilityGroups" && compatibilityGroups != nullptr) {
          std::vector<std::string> names;
          if (Status list = readStringList(r_, field, names); !list.ok()) return list;
          *compatibilityGroups = *compatibilityGroups || !names.empty();
          return Ok{};
        }
        return skipField(r_, field);
      });
      if (!read.ok()) return read;
      if (group.counterSet.length == 0) return fieldError(dotted(item, nameKey), "missing");
      groups.push_back(group);
      return Ok{};
    });
    if (!s.ok()) return s;
    range.first = size(slice_.counterGroups.size());
    range.count = size(groups.size());
    slice_.counterGroups.insert(slice_.counterGroups.end(), groups.begin(), groups.end());
    return Ok{};
  }

  Status readConsumption(const std::string& at, Device& device) {
    return readCounterGroups(at, "counterSet", device.consumesCounters,
                             &device.compatibilityGroups);
  }

  Status readSharedCounters(const std::string& at) {
    return readCounterGroups(at, "name", slice_.sharedCounters, nullptr);
  }

  Status readTaints(const std::string& at, Range& range) {
    range.first = size(slice_.taints.size());
    Status s = forEachElement(r_, at, [&](std::size_t i) -> Status {
      const std::string item = indexed(at, i);
      StoredTaint taint;
      Status read = forEachKey(r_, item, [&](const std::string& key) -> Status {
        const std::string field = dotted(item, key);
        if (key == "key") return readText(field, taint.key);
        if (key == "value") return readText(field, taint.value);
        if (key == "effect") {
          std::string effect;
          if (Status e = readStringField(r_, field, effect); !e.ok()) return e;
          taint.effect = parseTaintEffect(effect);
          return Ok{};
        }
        return skipField(r_, field);
      });
      if (!read.ok()) return read;
      slice_.taints.push_back(taint);
      return Ok{};
    });
    range.count = size(slice_.taints.size()) - range.first;
    return s;
  }

  JsonReader& r_;
  ResourceSlice& slice_;
  TextInterner text_;
};

}  // namespace

Result<ResourceSliceConstSharedPtr> readResourceSlice(JsonReader& reader) {
  auto slice = std::make_shared<ResourceSlice>();
  if (Status s = SliceReader(reader, *slice).read(); !s.ok()) return s.error();
  return ResourceSliceConstSharedPtr(std::move(slice));
}

Result<ResourceSliceConstSharedPtr> parseResourceSliceJson(std::string_view json) {
  JsonReader reader(json);
  auto slice = readResourceSlice(reader);
  if (!slice.ok()) return slice;
  if (!reader.finish()) return json::readerError(reader, "ResourceSlice");
  return slice;
}

}  // namespace gte::dra
