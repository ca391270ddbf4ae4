#include "dra/device_class.h"

#include "dra/json_fields.h"

namespace gte::dra {

std::string implicitExtendedResourceName(const std::string& className) {
  return "deviceclass.resource.kubernetes.io/" + className;
}

Result<DeviceClassConstSharedPtr> readDeviceClass(json::JsonReader& r) {
  auto dc = std::make_shared<DeviceClass>();
  const auto where = [&](std::string_view field) {
    std::string out = "DeviceClass";
    if (!dc->name.empty()) out += " " + dc->name;
    out += ": ";
    out += field;
    return out;
  };
  Status s = forEachKey(r, "DeviceClass", [&](const std::string& key) -> Status {
    if (key == "metadata") {
      ObjectMeta meta;
      if (Status m = readObjectMeta(r, where("metadata"), meta); !m.ok()) return m;
      dc->name = std::move(meta.name);
      dc->creationTimestamp = std::move(meta.creationTimestamp);
      dc->resourceVersion = std::move(meta.resourceVersion);
      return Ok{};
    }
    if (key != "spec") return skipField(r, where(key));
    return forEachKey(r, where("spec"), [&](const std::string& field) -> Status {
      if (field == "selectors") {
        return readDeviceSelectors(r, where("spec.selectors"), dc->selectors, dc->unknownSelector);
      }
      if (field == "extendedResourceName") {
        return readStringField(r, where("spec.extendedResourceName"), dc->extendedResourceName);
      }
      return skipField(r, where("spec." + field));
    });
  });
  if (!s.ok()) return s.error();
  if (dc->name.empty()) return fieldError(where("metadata.name"), "missing");
  return DeviceClassConstSharedPtr(std::move(dc));
}

Result<std::vector<DeviceClassConstSharedPtr>> parseDeviceClassListJson(std::string_view json) {
  json::JsonReader reader(json);
  std::vector<DeviceClassConstSharedPtr> items;
  Status s = forEachKey(reader, "DeviceClassList", [&](const std::string& key) -> Status {
    if (key != "items") return skipField(reader, "DeviceClassList." + key);
    return forEachElement(reader, "DeviceClassList.items", [&](std::size_t) -> Status {
      Result<DeviceClassConstSharedPtr> item = readDeviceClass(reader);
      if (!item.ok()) return item.error();
      items.push_back(std::move(item).value());
      return Ok{};
    });
  });
  if (!s.ok()) return s.error();
  if (!reader.finish()) return json::readerError(reader, "DeviceClassList");
  return items;
}

Result<DeviceClassConstSharedPtr> parseDeviceClassJson(std::string_view json) {
  json::JsonReader reader(json);
  auto dc = readDeviceClass(reader);
  if (!dc.ok()) return dc;
  if (!reader.finish()) return json::readerError(reader, "DeviceClass");
  return dc;
}

}  // namespace gte::dra
