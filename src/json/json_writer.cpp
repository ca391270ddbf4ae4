#include "json/json_writer.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>

namespace gte::json {

namespace {

// Bytes a JSON string cannot hold as they are: control characters, '"' and '\\'.
constexpr std::array<bool, 256> kNeedsEscape = [] {
  std::array<bool, 256> table{};
  for (int c = 0; c < 0x20; ++c)
    table[static_cast<std::size_t>(c)] = true;
  table['"'] = true;
  table['\\'] = true;
  return table;
}();

void appendEscape(std::string& out, unsigned char c) {
  static constexpr char kHex[] = "0123456789abcdef";
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

}  // namespace

bool quotesVerbatim(std::string_view value) noexcept {
  // Eight bytes per step: node names are 10-60 bytes and there is one per node of a request.
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;
  // Exact for "some byte of w is below n" (n <= 0x80); which byte is not needed.
  const auto anyBelow = [](std::uint64_t w, std::uint64_t n) {
    return ((w - kOnes * n) & ~w & kHighBits) != 0;
  };
  std::size_t i = 0;
  for (; i + 8 <= value.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, value.data() + i, 8);
    if (anyBelow(word, 0x20) || anyBelow(word ^ (kOnes * '"'), 1) ||
        anyBelow(word ^ (kOnes * '\\'), 1)) {
      return false;
    }
  }
  for (; i < value.size(); ++i) {
    if (kNeedsEscape[static_cast<unsigned char>(value[i])]) return false;
  }
  return true;
}

// Node names and reasons almost never need escaping: checked a word at a time and appended whole;
// otherwise one table lookup per byte, each run appended at once. Answers list every node of a
// request, so this is on the hot path.
void appendQuoted(std::string& out, std::string_view value) {
  out.push_back('"');
  if (quotesVerbatim(value)) {
    out.append(value);
    out.push_back('"');
    return;
  }
  const char* const data = value.data();
  std::size_t runStart = 0;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(data[i]);
    if (!kNeedsEscape[c]) continue;
    out.append(data + runStart, i - runStart);
    runStart = i + 1;
    appendEscape(out, c);
  }
  out.append(data + runStart, value.size() - runStart);
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
