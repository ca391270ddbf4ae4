#pragma once
// Reading the fields of resource.k8s.io objects with the pull parser: every malformed field is an
// Error naming its path ("ResourceSlice gpu-a-gpu.nvidia.com: spec.devices[2].attributes.uuid:
// expected a string at offset 812"), never a crash. Null reads as absent, as Go's decoder treats
// it.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "dra/node_selector.h"
#include "json/json_reader.h"
#include "model/resource_list_json.h"
#include "model/string_map.h"

namespace gte::dra {

// Calls onKey(key) for each key of the object at the reader (nothing for null); onKey reads or
// skips the value and returns a Status.
template <typename OnKey>
Status forEachKey(json::JsonReader& r, std::string_view where, OnKey onKey) {
  if (r.readNull()) return Ok{};
  if (!r.beginObject()) return readerError(r, where);
  std::string key;
  while (r.nextKey(key)) {
    if (Status s = onKey(static_cast<const std::string&>(key)); !s.ok()) return s;
  }
  if (!r.ok()) return readerError(r, where);
  return Ok{};
}

// Calls onElement(index) for each element of the array at the reader (nothing for null).
template <typename OnElement>
Status forEachElement(json::JsonReader& r, std::string_view where, OnElement onElement) {
  if (r.readNull()) return Ok{};
  if (!r.beginArray()) return readerError(r, where);
  std::size_t index = 0;
  while (r.nextElement()) {
    if (Status s = onElement(index); !s.ok()) return s;
    ++index;
  }
  if (!r.ok()) return readerError(r, where);
  return Ok{};
}

// `where` + "[i]" and `where` + "." + field, for the paths in errors.
std::string indexed(std::string_view where, std::size_t index);
std::string dotted(std::string_view where, std::string_view field);

Status skipField(json::JsonReader& r, std::string_view where);
Status readStringField(json::JsonReader& r, std::string_view where, std::string& out);
Status readIntField(json::JsonReader& r, std::string_view where, std::int64_t& out);
Status readBoolField(json::JsonReader& r, std::string_view where, bool& out);
Status readStringList(json::JsonReader& r, std::string_view where, std::vector<std::string>& out);
Status readNodeSelector(json::JsonReader& r, std::string_view where, NodeSelector& out);
// A list of resource.k8s.io DeviceSelectors ({cel: {expression}}): the expressions, in order;
// `unknownSelector` is set when an entry holds no CEL selector (a kind this reader predates).
Status readDeviceSelectors(json::JsonReader& r, std::string_view where,
                           std::vector<std::string>& out, bool& unknownSelector);

// The parts of metadata the DRA readers keep.
struct ObjectMeta {
  std::string name;
  std::string ns;
  std::string uid;
  std::string resourceVersion;
  std::string creationTimestamp;  // RFC 3339, as the API server writes it
  bool deleting = false;          // deletionTimestamp set
  StringMap annotations;
};
Status readObjectMeta(json::JsonReader& r, std::string_view where, ObjectMeta& out);

// An error about a value that parsed but means nothing valid.
Error fieldError(std::string_view where, std::string_view what);

}  // namespace gte::dra
