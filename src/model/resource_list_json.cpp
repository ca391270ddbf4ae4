#include "model/resource_list_json.h"

#include <string>

#include "model/string_map.h"

namespace gte {

Status readQuantityValue(json::JsonReader& reader, std::string_view where, Quantity& out) {
  std::string_view raw;
  std::string text;
  const json::Kind kind = reader.peek();
  if (kind == json::Kind::kString) {
    if (!reader.readString(text)) return json::readerError(reader, where);
    raw = text;
  } else if (kind == json::Kind::kNumber) {
    if (!reader.skipValue(&raw)) return json::readerError(reader, where);
  } else {
    return invalidArgument(std::string(where) + ": expected a quantity, got " +
                           json::kindName(kind));
  }
  auto q = parseQuantity(raw);
  if (!q) return invalidArgument(std::string(where) + ": " + q.error().message);
  out = *q;
  return Ok{};
}

Status readResourceList(json::JsonReader& reader, std::string_view where, ResourceList& out) {
  if (reader.readNull()) return Ok{};
  if (!reader.beginObject()) return json::readerError(reader, where);
  std::string name;
  std::string text;
  while (reader.nextKey(name)) {
    const json::Kind kind = reader.peek();
    if (kind == json::Kind::kNull) {
      reader.readNull();
      continue;
    }
    std::string_view raw;
    if (kind == json::Kind::kString) {
      if (!reader.readString(text)) break;
      raw = text;
    } else if (kind == json::Kind::kNumber) {
      // Quantity.UnmarshalJSON also accepts a bare number.
      if (!reader.skipValue(&raw)) break;
    } else {
      return invalidArgument(std::string(where) + "[" + name +
                             "]: expected a quantity string, got " + json::kindName(kind));
    }
    auto q = parseQuantity(raw);
    if (!q) return invalidArgument(std::string(where) + "[" + name + "]: " + q.error().message);
    out.set(name, *q);
  }
  if (!reader.ok()) return json::readerError(reader, where);
  return Ok{};
}

Status readStringMap(json::JsonReader& reader, std::string_view where, StringMap& out) {
  if (reader.readNull()) return Ok{};
  if (!reader.beginObject()) return json::readerError(reader, where);
  std::string key;
  std::string value;
  while (reader.nextKey(key)) {
    if (reader.readNull()) continue;
    if (reader.peek() != json::Kind::kString) {
      return invalidArgument(std::string(where) + "[" + key + "]: expected a string, got " +
                             json::kindName(reader.peek()));
    }
    if (!reader.readString(value)) break;
    out.insert_or_assign(key, value);
  }
  if (!reader.ok()) return json::readerError(reader, where);
  return Ok{};
}

}  // namespace gte
