#include "dra/device_taint_rule.h"
#include "dra/json_fields.h"

namespace gte::dra {
namespace {

using json::JsonReader;
using json::Kind;

// A `*string` of the selector: null or absent stays unset.
Status readOptionalString(JsonReader& r, std::string_view where, std::optional<std::string>& out) {
  if (r.peek() == Kind::kNull) {
    out.reset();
    return skipField(r, where);
  }
  std::string value;
  if (Status s = readStringField(r, where, value); !s.ok()) return s;
  out = std::move(value);
  return Ok{};
}

Status readSelector(JsonReader& r, std::string_view where,
                    std::optional<DeviceTaintSelector>& out) {
  if (r.peek() == Kind::kNull) return skipField(r, where);  // no selector: no device
  DeviceTaintSelector selector;
  Status s = forEachKey(r, where, [&](const std::string& key) -> Status {
    const std::string field = dotted(where, key);
    if (key == "driver") return readOptionalString(r, field, selector.driver);
    if (key == "pool") return readOptionalString(r, field, selector.pool);
    if (key == "device") return readOptionalString(r, field, selector.device);
    return skipField(r, field);
  });
  if (!s.ok()) return s;
  out = std::move(selector);
  return Ok{};
}

}  // namespace

Result<DeviceTaintRuleConstSharedPtr> readDeviceTaintRule(JsonReader& r) {
  auto rule = std::make_shared<DeviceTaintRule>();
  const auto where = [&](std::string_view field) {
    std::string out = "DeviceTaintRule";
    if (!rule->name.empty()) out += " " + rule->name;
    out += ": ";
    out += field;
    return out;
  };
  bool effectSet = false;
  const auto readTaint = [&]() -> Status {
    return forEachKey(r, where("spec.taint"), [&](const std::string& key) -> Status {
      const std::string field = where("spec.taint." + key);
      if (key == "key") return readStringField(r, field, rule->key);
      if (key == "value") return readStringField(r, field, rule->value);
      if (key != "effect") return skipField(r, field);
      std::string effect;
      if (Status e = readStringField(r, field, effect); !e.ok()) return e;
      effectSet = !effect.empty();
      rule->effect = parseTaintEffect(effect);
      return Ok{};
    });
  };
  Status s = forEachKey(r, "DeviceTaintRule", [&](const std::string& key) -> Status {
    if (key == "metadata") {
      ObjectMeta meta;
      if (Status m = readObjectMeta(r, where("metadata"), meta); !m.ok()) return m;
      rule->name = std::move(meta.name);
      rule->resourceVersion = std::move(meta.resourceVersion);
      return Ok{};
    }
    if (key != "spec") return skipField(r, where(key));  // status: eviction progress only
    return forEachKey(r, where("spec"), [&](const std::string& field) -> Status {
      if (field == "deviceSelector") {
        return readSelector(r, where("spec.deviceSelector"), rule->selector);
      }
      if (field == "taint") return readTaint();
      return skipField(r, where("spec." + field));
    });
  });
  if (!s.ok()) return s.error();
  if (rule->name.empty()) return fieldError(where("metadata.name"), "missing");
  if (rule->key.empty()) return fieldError(where("spec.taint.key"), "missing");
  if (!effectSet) return fieldError(where("spec.taint.effect"), "missing");
  return DeviceTaintRuleConstSharedPtr(std::move(rule));
}

Result<DeviceTaintRuleConstSharedPtr> parseDeviceTaintRuleJson(std::string_view json) {
  JsonReader reader(json);
  auto rule = readDeviceTaintRule(reader);
  if (!rule.ok()) return rule;
  if (!reader.finish()) return json::readerError(reader, "DeviceTaintRule");
  return rule;
}

}  // namespace gte::dra
