#include "json/json_writer.h"

#include <charconv>

namespace gte::json {

void appendQuoted(std::string& out, std::string_view value) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t runStart = 0;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(value.substr(runStart, i - runStart));
    runStart = i + 1;
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default:
        out.append("\\u00");
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xF]);
    }
  }
  out.append(value.substr(runStart));
  out.push_back('"');
}

JsonWriter& JsonWriter::key(std::string_view name) {
  if (needComma_) out_.push_back(',');
  appendQuoted(out_, name);
  out_.push_back(':');
  needComma_ = false;
  return *this;
}

JsonWriter& JsonWriter::element() {
  if (needComma_) out_.push_back(',');
  needComma_ = false;
  return *this;
}

JsonWriter& JsonWriter::string(std::string_view v) {
  appendQuoted(out_, v);
  needComma_ = true;
  return *this;
}

JsonWriter& JsonWriter::integer(std::int64_t value) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, value);
  out_.append(buf, res.ptr);
  needComma_ = true;
  return *this;
}

}  // namespace gte::json
