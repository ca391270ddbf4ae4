#include "dra/json_fields.h"
#include "dra/resource_claim.h"

namespace gte::dra {
namespace {

using json::JsonReader;
using json::Kind;

constexpr std::string_view kExtendedResourceClaimAnnotation =
    "resource.kubernetes.io/extended-resource-claim";

Status readTolerations(JsonReader& r, const std::string& at, std::vector<DeviceToleration>& out) {
  return forEachElement(r, at, [&](std::size_t i) -> Status {
    const std::string item = indexed(at, i);
    DeviceToleration toleration;
    Status s = forEachKey(r, item, [&](const std::string& key) -> Status {
      const std::string field = dotted(item, key);
      if (key == "key") return readStringField(r, field, toleration.key);
      if (key == "operator") return readStringField(r, field, toleration.op);
      if (key == "value") return readStringField(r, field, toleration.value);
      if (key == "effect") return readStringField(r, field, toleration.effect);
      return skipField(r, field);
    });
    if (!s.ok()) return s;
    if (toleration.op.empty()) toleration.op = "Equal";  // the API default
    out.push_back(std::move(toleration));
    return Ok{};
  });
}

void markUnsupported(DeviceRequestShape& shape, std::string reason) {
  if (shape.unsupported.empty()) shape.unsupported = std::move(reason);
}

// The fields an `exactly` request and a firstAvailable subrequest share.
Status readShape(JsonReader& r, const std::string& at, DeviceRequestShape& shape) {
  bool countSet = false;
  std::string mode;
  Status s = forEachKey(r, at, [&](const std::string& key) -> Status {
    const std::string field = dotted(at, key);
    if (key == "name") return readStringField(r, field, shape.name);
    if (key == "deviceClassName") return readStringField(r, field, shape.deviceClassName);
    if (key == "selectors") {
      bool unknown = false;
      if (Status read = readDeviceSelectors(r, field, shape.selectors, unknown); !read.ok()) {
        return read;
      }
      if (unknown) markUnsupported(shape, "a selector that is not CEL");
      return Ok{};
    }
    if (key == "allocationMode") return readStringField(r, field, mode);
    if (key == "count") {
      countSet = r.peek() != Kind::kNull;
      return readIntField(r, field, shape.count);
    }
    if (key == "tolerations") return readTolerations(r, field, shape.tolerations);
    if (key == "adminAccess") {
      bool admin = false;
      if (Status read = readBoolField(r, field, admin); !read.ok()) return read;
      if (admin) markUnsupported(shape, "admin access");
      return Ok{};
    }
    if (key == "capacity") {
      return forEachKey(r, field, [&](const std::string& name) -> Status {
        if (name != "requests") return skipField(r, dotted(field, name));
        return readResourceList(r, dotted(field, name), shape.capacityRequests);
      });
    }
    if (key == "derivedAttributes") {
      std::string_view raw;
      if (!r.skipValue(&raw)) return json::readerError(r, field);
      if (raw != "null" && raw != "[]") markUnsupported(shape, "derived attributes");
      return Ok{};
    }
    return skipField(r, field);
  });
  if (!s.ok()) return s;
  if (shape.deviceClassName.empty()) return fieldError(at + ".deviceClassName", "missing");
  if (mode.empty() || mode == "ExactCount") {
    shape.mode = AllocationMode::kExactCount;
    if (!countSet || shape.count == 0) shape.count = 1;  // the API default
    if (shape.count < 0) return fieldError(at + ".count", "negative");
  } else if (mode == "All") {
    shape.mode = AllocationMode::kAll;
    shape.count = 0;
  } else {
    markUnsupported(shape, "allocation mode " + mode);
  }
  return Ok{};
}

Status readRequest(JsonReader& r, const std::string& at, DeviceRequest& request) {
  int shapes = 0;
  Status s = forEachKey(r, at, [&](const std::string& key) -> Status {
    const std::string field = dotted(at, key);
    if (key == "name") return readStringField(r, field, request.name);
    if (r.peek() == Kind::kNull) return skipField(r, field);
    if (key == "exactly") {
      ++shapes;
      DeviceRequestShape shape;
      if (Status read = readShape(r, field, shape); !read.ok()) return read;
      request.alternatives.push_back(std::move(shape));
      return Ok{};
    }
    if (key == "firstAvailable") {
      ++shapes;
      request.firstAvailable = true;
      return forEachElement(r, field, [&](std::size_t i) -> Status {
        DeviceRequestShape shape;
        if (Status read = readShape(r, indexed(field, i), shape); !read.ok()) return read;
        request.alternatives.push_back(std::move(shape));
        return Ok{};
      });
    }
    return skipField(r, field);
  });
  if (!s.ok()) return s;
  if (request.name.empty()) return fieldError(at + ".name", "missing");
  if (shapes != 1 || request.alternatives.empty()) {
    return fieldError(at, "want exactly one of exactly, firstAvailable (with subrequests)");
  }
  if (!request.firstAvailable) request.alternatives.front().name = request.name;
  return Ok{};
}

Status readClaimSpec(JsonReader& r, const std::string& at, ClaimSpec& spec) {
  return forEachKey(r, at, [&](const std::string& key) -> Status {
    if (key != "devices") return skipField(r, dotted(at, key));
    const std::string devices = dotted(at, key);
    return forEachKey(r, devices, [&](const std::string& field) -> Status {
      const std::string list = dotted(devices, field);
      if (field == "requests") {
        return forEachElement(r, list, [&](std::size_t i) -> Status {
          DeviceRequest request;
          if (Status read = readRequest(r, indexed(list, i), request); !read.ok()) return read;
          spec.requests.push_back(std::move(request));
          return Ok{};
        });
      }
      if (field == "constraints") {
        return forEachElement(r, list, [&](std::size_t i) -> Status {
          const std::string item = indexed(list, i);
          DeviceConstraint constraint;
          Status read = forEachKey(r, item, [&](const std::string& name) -> Status {
            const std::string value = dotted(item, name);
            if (name == "requests") return readStringList(r, value, constraint.requests);
            if (name == "matchAttribute") {
              return readStringField(r, value, constraint.matchAttribute);
            }
            if (name == "distinctAttribute") {
              return readStringField(r, value, constraint.distinctAttribute);
            }
            return skipField(r, value);
          });
          if (!read.ok()) return read;
          if (constraint.matchAttribute.empty() == constraint.distinctAttribute.empty() &&
              spec.unsupported.empty()) {
            spec.unsupported = "constraint " + std::to_string(i) +
                               " is neither one matchAttribute nor one distinctAttribute";
          }
          spec.constraints.push_back(std::move(constraint));
          return Ok{};
        });
      }
      return skipField(r, list);
    });
  });
}

Status readAllocation(JsonReader& r, const std::string& at, ResourceClaim& claim) {
  if (r.peek() == Kind::kNull) return skipField(r, at);
  claim.allocated = true;
  return forEachKey(r, at, [&](const std::string& key) -> Status {
    if (key != "devices") return skipField(r, dotted(at, key));
    const std::string devices = dotted(at, key);
    return forEachKey(r, devices, [&](const std::string& field) -> Status {
      if (field != "results") return skipField(r, dotted(devices, field));
      const std::string list = dotted(devices, field);
      return forEachElement(r, list, [&](std::size_t i) -> Status {
        const std::string item = indexed(list, i);
        AllocatedDevice device;
        Status read = forEachKey(r, item, [&](const std::string& name) -> Status {
          const std::string value = dotted(item, name);
          if (name == "request") return readStringField(r, value, device.request);
          if (name == "driver") return readStringField(r, value, device.driver);
          if (name == "pool") return readStringField(r, value, device.pool);
          if (name == "device") return readStringField(r, value, device.device);
          if (name == "adminAccess") return readBoolField(r, value, device.adminAccess);
          if (name == "shareID") {
            device.shared = r.peek() != Kind::kNull;
            return skipField(r, value);
          }
          if (name == "consumedCapacity") {
            return readResourceList(r, value, device.consumedCapacity);
          }
          return skipField(r, value);
        });
        if (!read.ok()) return read;
        if (device.driver.empty() || device.pool.empty() || device.device.empty()) {
          return fieldError(item, "want driver, pool and device");
        }
        claim.devices.push_back(std::move(device));
        return Ok{};
      });
    });
  });
}

Status readStatus(JsonReader& r, const std::string& at, ResourceClaim& claim) {
  return forEachKey(r, at, [&](const std::string& key) -> Status {
    const std::string field = dotted(at, key);
    if (key == "allocation") return readAllocation(r, field, claim);
    if (key == "reservedFor") {
      return forEachElement(r, field, [&](std::size_t i) -> Status {
        const std::string item = indexed(field, i);
        ClaimConsumer consumer;
        Status read = forEachKey(r, item, [&](const std::string& name) -> Status {
          const std::string value = dotted(item, name);
          if (name == "resource") return readStringField(r, value, consumer.resource);
          if (name == "name") return readStringField(r, value, consumer.name);
          if (name == "uid") return readStringField(r, value, consumer.uid);
          return skipField(r, value);
        });
        if (!read.ok()) return read;
        claim.reservedFor.push_back(std::move(consumer));
        return Ok{};
      });
    }
    return skipField(r, field);
  });
}

std::string objectWhere(std::string_view kind, const std::string& ns, const std::string& name,
                        std::string_view field) {
  std::string out(kind);
  if (!name.empty()) {
    out += ' ';
    out += ns.empty() ? name : ns + "/" + name;
  }
  out += ": ";
  out += field;
  return out;
}

}  // namespace

Result<ResourceClaimConstSharedPtr> readResourceClaim(JsonReader& r) {
  auto claim = std::make_shared<ResourceClaim>();
  const auto where = [&](std::string_view field) {
    return objectWhere("ResourceClaim", claim->ns, claim->name, field);
  };
  Status s = forEachKey(r, "ResourceClaim", [&](const std::string& key) -> Status {
    if (key == "metadata") {
      ObjectMeta meta;
      if (Status m = readObjectMeta(r, where("metadata"), meta); !m.ok()) return m;
      claim->name = std::move(meta.name);
      claim->ns = std::move(meta.ns);
      claim->uid = std::move(meta.uid);
      claim->resourceVersion = std::move(meta.resourceVersion);
      claim->deleting = meta.deleting;
      const auto it = meta.annotations.find(kExtendedResourceClaimAnnotation);
      claim->extendedResourceClaim = it != meta.annotations.end() && it->second == "true";
      return Ok{};
    }
    if (key == "spec") return readClaimSpec(r, where("spec"), claim->spec);
    if (key == "status") return readStatus(r, where("status"), *claim);
    return skipField(r, where(key));
  });
  if (!s.ok()) return s.error();
  if (claim->name.empty()) return fieldError(where("metadata.name"), "missing");
  return ResourceClaimConstSharedPtr(std::move(claim));
}

Result<ResourceClaimTemplateConstSharedPtr> readResourceClaimTemplate(JsonReader& r) {
  auto tmpl = std::make_shared<ResourceClaimTemplate>();
  const auto where = [&](std::string_view field) {
    return objectWhere("ResourceClaimTemplate", tmpl->ns, tmpl->name, field);
  };
  Status s = forEachKey(r, "ResourceClaimTemplate", [&](const std::string& key) -> Status {
    if (key == "metadata") {
      ObjectMeta meta;
      if (Status m = readObjectMeta(r, where("metadata"), meta); !m.ok()) return m;
      tmpl->name = std::move(meta.name);
      tmpl->ns = std::move(meta.ns);
      return Ok{};
    }
    if (key != "spec") return skipField(r, where(key));
    return forEachKey(r, where("spec"), [&](const std::string& field) -> Status {
      if (field == "spec") return readClaimSpec(r, where("spec.spec"), tmpl->spec);
      return skipField(r, where("spec." + field));
    });
  });
  if (!s.ok()) return s.error();
  if (tmpl->name.empty()) return fieldError(where("metadata.name"), "missing");
  return ResourceClaimTemplateConstSharedPtr(std::move(tmpl));
}

Result<ResourceClaimConstSharedPtr> parseResourceClaimJson(std::string_view json) {
  JsonReader reader(json);
  auto claim = readResourceClaim(reader);
  if (!claim.ok()) return claim;
  if (!reader.finish()) return json::readerError(reader, "ResourceClaim");
  return claim;
}

Result<ResourceClaimTemplateConstSharedPtr> parseResourceClaimTemplateJson(std::string_view json) {
  JsonReader reader(json);
  auto tmpl = readResourceClaimTemplate(reader);
  if (!tmpl.ok()) return tmpl;
  if (!reader.finish()) return json::readerError(reader, "ResourceClaimTemplate");
  return tmpl;
}

}  // namespace gte::dra
