#include "json/json_fields.h"

#include <utility>

namespace gte::json {

Error readerError(const JsonReader& reader, std::string_view what) {
  return invalidArgument("malformed " + std::string(what) + ": " + reader.error());
}

std::string indexed(std::string_view where, std::size_t index) {
  std::string out(where);
  out += '[';
  out += std::to_string(index);
  out += ']';
  return out;
}

std::string dotted(std::string_view where, std::string_view field) {
  std::string out(where);
  out += '.';
  out += field;
  return out;
}

Error fieldError(std::string_view where, std::string_view what) {
  std::string message(where);
  message += ": ";
  message += what;
  return invalidArgument(std::move(message));
}

Status skipField(JsonReader& r, std::string_view where) {
  if (!r.skipValue()) return readerError(r, where);
  return Ok{};
}

Status readStringField(JsonReader& r, std::string_view where, std::string& out) {
  if (r.readNull()) {
    out.clear();
    return Ok{};
  }
  if (!r.readString(out)) return readerError(r, where);
  return Ok{};
}

Status skipField(JsonReader& r, std::string_view where, std::string_view field) {
  if (!r.skipValue()) return readerError(r, dotted(where, field));
  return Ok{};
}

Status readStringField(JsonReader& r, std::string_view where, std::string_view field,
                       std::string& out) {
  if (r.readNull()) {
    out.clear();
    return Ok{};
  }
  if (!r.readString(out)) return readerError(r, dotted(where, field));
  return Ok{};
}

Status readIntField(JsonReader& r, std::string_view where, std::string_view field,
                    std::int64_t& out) {
  if (r.readNull()) return Ok{};
  if (!r.readInt64(out)) return readerError(r, dotted(where, field));
  return Ok{};
}

Status readIntField(JsonReader& r, std::string_view where, std::int64_t& out) {
  if (r.readNull()) return Ok{};
  if (!r.readInt64(out)) return readerError(r, where);
  return Ok{};
}

Status readBoolField(JsonReader& r, std::string_view where, bool& out) {
  if (r.readNull()) return Ok{};
  if (!r.readBool(out)) return readerError(r, where);
  return Ok{};
}

Status readStringList(JsonReader& r, std::string_view where, std::vector<std::string>& out) {
  return forEachElement(r, where, [&](std::size_t i) -> Status {
    std::string value;
    if (Status s = readStringField(r, indexed(where, i), value); !s.ok()) return s;
    out.push_back(std::move(value));
    return Ok{};
  });
}

}  // namespace gte::json
