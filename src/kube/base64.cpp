#include "kube/base64.h"

#include <array>
#include <cstdint>

namespace gte::kube {
namespace {

constexpr std::int8_t kInvalid = -1;
constexpr std::int8_t kPad = -2;

constexpr std::array<std::int8_t, 256> makeTable() {
  std::array<std::int8_t, 256> table{};
  for (auto& v : table)
    v = kInvalid;
  const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int i = 0; i < 64; ++i)
    table[static_cast<unsigned char>(alphabet[i])] = static_cast<std::int8_t>(i);
  table['='] = kPad;
  return table;
}

constexpr auto kTable = makeTable();

bool isSpace(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

}  // namespace

Result<std::string> decodeBase64(std::string_view text) {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t accumulator = 0;
  int sextets = 0;
  int padding = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (isSpace(c)) continue;
    const std::int8_t v = kTable[static_cast<unsigned char>(c)];
    if (v == kInvalid || (padding > 0 && v != kPad)) {
      return invalidArgument("base64: invalid character at offset " + std::to_string(i));
    }
    if (v == kPad) {
      ++padding;
      if (padding > 2)
        return invalidArgument("base64: too much padding at offset " + std::to_string(i));
      continue;
    }
    accumulator = (accumulator << 6) | static_cast<std::uint32_t>(v);
    if (++sextets == 4) {
      out.push_back(static_cast<char>((accumulator >> 16) & 0xff));
      out.push_back(static_cast<char>((accumulator >> 8) & 0xff));
      out.push_back(static_cast<char>(accumulator & 0xff));
      accumulator = 0;
      sextets = 0;
    }
  }
  // A trailing group of 2 or 3 sextets carries 1 or 2 bytes; padding may be present or omitted.
  if (sextets == 1) return invalidArgument("base64: truncated input");
  if (sextets == 2) {
    out.push_back(static_cast<char>((accumulator >> 4) & 0xff));
  } else if (sextets == 3) {
    out.push_back(static_cast<char>((accumulator >> 10) & 0xff));
    out.push_back(static_cast<char>((accumulator >> 2) & 0xff));
  }
  return out;
}

}  // namespace gte::kube
