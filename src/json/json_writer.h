#pragma once
// Appends JSON to a string. Responses are small and flat (names, messages, integers), so a string
// builder beats a DOM: no allocation per value, and raw spans (echoed Nodes) go in verbatim.
#include <cstdint>
#include <string>
#include <string_view>

namespace gte::json {

// Appends `value` as a quoted JSON string, escaping quotes, backslashes and control characters.
void appendQuoted(std::string& out, std::string_view value);
// Whether appendQuoted would write `value` between quotes unchanged (nothing to escape).
bool quotesVerbatim(std::string_view value) noexcept;

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}
  JsonWriter& beginObject() { return open("{"); }
  JsonWriter& endObject() { return value("}"); }
  JsonWriter& beginArray() { return open("["); }
  JsonWriter& endArray() { return value("]"); }
  // Writes `"name":` with a comma before it when needed.
  JsonWriter& key(std::string_view name);
  // Separator before an array element.
  JsonWriter& element();
  JsonWriter& string(std::string_view value);
  JsonWriter& integer(std::int64_t value);
  JsonWriter& boolean(bool v) { return value(v ? "true" : "false"); }
  JsonWriter& null() { return value("null"); }
  // Already-serialised JSON (e.g. a received Node object), copied byte for byte.
  JsonWriter& rawValue(std::string_view json) { return value(json); }

 private:
  // A completed value: whatever comes next in the enclosing container needs a comma.
  JsonWriter& value(std::string_view s) {
    out_.append(s);
    needComma_ = true;
    return *this;
  }
  JsonWriter& open(std::string_view s) {
    out_.append(s);
    needComma_ = false;
    return *this;
  }
  std::string& out_;
  bool needComma_ = false;
};

}  // namespace gte::json
