#pragma once
// Reading the fields of an object from outside (a Kubernetes object, a DRA object, a group-size
// owner) with the pull parser, strictly: every malformed field is an Error naming its path
// ("ResourceSlice gpu-a: spec.devices[2].attributes.uuid: expected a string at offset 812"), never
// a crash and never a half-read value taken as whole. Null reads as absent, as Go's decoder
// treats it. The one toolkit for such readers; the operator tables read the extender's own
// answers leniently instead (report/json_fields.h).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "json/json_reader.h"

namespace gte::json {

// Turns the reader's sticky error into an Error naming what was being read.
Error readerError(const JsonReader& reader, std::string_view what);

// Calls onKey(key) for each key of the object at the reader (nothing for null); onKey reads or
// skips the value and returns a Status.
template <typename OnKey>
Status forEachKey(JsonReader& r, std::string_view where, OnKey onKey) {
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
Status forEachElement(JsonReader& r, std::string_view where, OnElement onElement) {
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

Status skipField(JsonReader& r, std::string_view where);
// null reads as "" (string), and leaves `out` as it was (int, bool).
Status readStringField(JsonReader& r, std::string_view where, std::string& out);
Status readIntField(JsonReader& r, std::string_view where, std::int64_t& out);
Status readBoolField(JsonReader& r, std::string_view where, bool& out);
Status readStringList(JsonReader& r, std::string_view where, std::vector<std::string>& out);

// The same for the member `field` of the object at `where`, the path `where.field` built only for
// an error (the readers on the request path, a pod's fields, allocate nothing per field).
Status skipField(JsonReader& r, std::string_view where, std::string_view field);
Status readStringField(JsonReader& r, std::string_view where, std::string_view field,
                       std::string& out);
Status readIntField(JsonReader& r, std::string_view where, std::string_view field,
                    std::int64_t& out);

// An error about a value that parsed but means nothing valid: "<where>: <what>".
Error fieldError(std::string_view where, std::string_view what);

}  // namespace gte::json
