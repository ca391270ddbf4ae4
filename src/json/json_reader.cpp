#include "json/json_reader.h"

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>

namespace gte::json {
namespace {

constexpr int kMaxSupportedDepth = 256;

// The offset (0..7) of the first byte of `word`, in memory order, that ends a plain run of a
// string: '"', '\\', a control character or a byte of a UTF-8 sequence; 8 when there is none.
// Each test below sets the high bit of every byte it matches and possibly of some bytes after a
// match (a borrow), never before one, so the lowest set bit is exact.
unsigned firstSpecialByte(std::uint64_t word) noexcept {
  static_assert(std::endian::native == std::endian::little, "byte order of the word scan");
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHighBits = 0x8080808080808080ULL;
  const std::uint64_t quote = word ^ (kOnes * '"');
  const std::uint64_t backslash = word ^ (kOnes * '\\');
  const std::uint64_t hits = (((quote - kOnes) & ~quote) | ((backslash - kOnes) & ~backslash) |
                              (word - kOnes * 0x20) | word) &
                             kHighBits;
  return hits == 0 ? 8 : static_cast<unsigned>(std::countr_zero(hits)) / 8;
}

bool isDigit(char c) noexcept {
  return c >= '0' && c <= '9';
}

int hexValue(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void appendUtf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// Length of the well-formed UTF-8 sequence (RFC 3629) that starts at text[pos], a byte >= 0x80;
// 0 when there is none: a stray continuation byte, an overlong form, a UTF-16 surrogate, a code
// point above U+10FFFF or a sequence cut short. JSON text is UTF-8 (RFC 8259 section 8.1), and the
// wire layer echoes node objects byte for byte, so a byte that is not UTF-8 would make the answer
// malformed too.
std::size_t utf8SequenceLength(std::string_view text, std::size_t pos) noexcept {
  const auto byteAt = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byteAt(pos);
  std::size_t length = 0;
  unsigned char low = 0x80;  // allowed range of the second byte
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong below U+0800
    if (lead == 0xED) high = 0x9F;  // U+D800..U+DFFF are surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong below U+10000
    if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (text.size() - pos < length) return 0;
  if (byteAt(pos + 1) < low || byteAt(pos + 1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (byteAt(pos + i) < 0x80 || byteAt(pos + i) > 0xBF) return 0;
  }
  return length;
}

}  // namespace

const char* kindName(Kind kind) noexcept {
  switch (kind) {
    case Kind::kObject:
      return "object";
    case Kind::kArray:
      return "array";
    case Kind::kString:
      return "string";
    case Kind::kNumber:
      return "number";
    case Kind::kTrue:
    case Kind::kFalse:
      return "boolean";
    case Kind::kNull:
      return "null";
    case Kind::kEnd:
      return "end of input";
    case Kind::kInvalid:
      return "invalid token";
  }
  return "invalid token";
}

void JsonReader::skipWhitespace() noexcept {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return;
    ++pos_;
  }
}

bool JsonReader::failAt(std::string_view message) noexcept {
  if (error_.empty()) {
    error_.append(message);
    error_.append(" at offset ");
    error_.append(std::to_string(pos_));
  }
  return false;
}

bool JsonReader::fail(std::string_view message) {
  return failAt(message);
}

Kind JsonReader::peek() noexcept {
  if (!ok()) return Kind::kInvalid;
  skipWhitespace();
  if (pos_ >= text_.size()) return Kind::kEnd;
  switch (text_[pos_]) {
    case '{':
      return Kind::kObject;
    case '[':
      return Kind::kArray;
    case '"':
      return Kind::kString;
    case 't':
      return Kind::kTrue;
    case 'f':
      return Kind::kFalse;
    case 'n':
      return Kind::kNull;
    default:
      return (text_[pos_] == '-' || isDigit(text_[pos_])) ? Kind::kNumber : Kind::kInvalid;
  }
}

bool JsonReader::expect(char c) noexcept {
  skipWhitespace();
  if (pos_ < text_.size() && text_[pos_] == c) {
    ++pos_;
    return true;
  }
  return false;
}

bool JsonReader::beginObject() noexcept {
  if (peek() != Kind::kObject) return failAt("expected an object");
  if (depth_ >= maxDepth_ || depth_ >= kMaxSupportedDepth) return failAt("nesting too deep");
  ++pos_;
  ++depth_;
  needComma_[depth_ / 64] &= ~(std::uint64_t{1} << (depth_ % 64));
  return true;
}

bool JsonReader::beginArray() noexcept {
  if (peek() != Kind::kArray) return failAt("expected an array");
  if (depth_ >= maxDepth_ || depth_ >= kMaxSupportedDepth) return failAt("nesting too deep");
  ++pos_;
  ++depth_;
  needComma_[depth_ / 64] &= ~(std::uint64_t{1} << (depth_ % 64));
  return true;
}

bool JsonReader::nextKey(std::string& key) {
  return nextKeyInto(&key);
}

bool JsonReader::nextKeyInto(std::string* key) {
  if (!ok()) return false;
  const std::uint64_t bit = std::uint64_t{1} << (depth_ % 64);
  std::uint64_t& word = needComma_[depth_ / 64];
  if (expect('}')) {
    --depth_;
    return false;
  }
  if (word & bit) {
    if (!expect(',')) return failAt("expected ',' or '}' in object");
  }
  word |= bit;
  skipWhitespace();
  if (pos_ >= text_.size() || text_[pos_] != '"') return failAt("expected a string key");
  if (key != nullptr) key->clear();
  if (!scanString(key)) return false;
  if (!expect(':')) return failAt("expected ':' after key");
  return true;
}

bool JsonReader::nextElement() noexcept {
  if (!ok()) return false;
  const std::uint64_t bit = std::uint64_t{1} << (depth_ % 64);
  std::uint64_t& word = needComma_[depth_ / 64];
  if (expect(']')) {
    --depth_;
    return false;
  }
  if (word & bit) {
    if (!expect(',')) return failAt("expected ',' or ']' in array");
  }
  word |= bit;
  return true;
}

bool JsonReader::scanString(std::string* out) {
  ++pos_;  // opening quote
  std::size_t runStart = pos_;
  while (pos_ < text_.size()) {
    // Plain bytes eight at a time (node names, image names and digests are long runs of them),
    // then the byte that ended the run one at a time below.
    while (pos_ + 8 <= text_.size()) {
      std::uint64_t word;
      std::memcpy(&word, text_.data() + pos_, 8);
      const unsigned plain = firstSpecialByte(word);
      pos_ += plain;
      if (plain < 8) break;
    }
    if (pos_ >= text_.size()) break;
    const char c = text_[pos_];
    if (c == '"') {
      if (out) out->append(text_.substr(runStart, pos_ - runStart));
      ++pos_;
      return true;
    }
    if (static_cast<unsigned char>(c) < 0x20) return failAt("control character in string");
    if (static_cast<unsigned char>(c) >= 0x80) {
      const std::size_t length = utf8SequenceLength(text_, pos_);
      if (length == 0) return failAt("invalid UTF-8 in string");
      pos_ += length;
      continue;
    }
    if (c != '\\') {
      ++pos_;
      continue;
    }
    if (out) out->append(text_.substr(runStart, pos_ - runStart));
    ++pos_;
    if (pos_ >= text_.size()) break;
    const char e = text_[pos_++];
    char plain = 0;
    switch (e) {
      case '"':
      case '\\':
      case '/':
        plain = e;
        break;
      case 'b':
        plain = '\b';
        break;
      case 'f':
        plain = '\f';
        break;
      case 'n':
        plain = '\n';
        break;
      case 'r':
        plain = '\r';
        break;
      case 't':
        plain = '\t';
        break;
      case 'u': {
        auto readHex4 = [&](std::uint32_t& v) {
          if (pos_ + 4 > text_.size()) return false;
          v = 0;
          for (int i = 0; i < 4; ++i) {
            const int h = hexValue(text_[pos_ + i]);
            if (h < 0) return false;
            v = (v << 4) | static_cast<std::uint32_t>(h);
          }
          pos_ += 4;
          return true;
        };
        std::uint32_t cp = 0;
        if (!readHex4(cp)) return failAt("bad \\u escape");
        // One rule for every surrogate that is not half of a valid pair, as Go's decoder has it:
        // it reads as U+FFFD, and an escape after it that does not complete it is read on its own
        // (so "\\udaad\\udae8" is two U+FFFD). Whatever is read is then valid UTF-8, and a writer
        // writes it back readable.
        if (cp >= 0xD800 && cp <= 0xDBFF && pos_ + 5 < text_.size() && text_[pos_] == '\\' &&
            text_[pos_ + 1] == 'u') {
          const std::size_t second = pos_;
          pos_ += 2;
          std::uint32_t low = 0;
          if (readHex4(low) && low >= 0xDC00 && low <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else {
            pos_ = second;  // not a low half: the next loop turn reads that escape
            cp = 0xFFFD;
          }
        } else if (cp >= 0xD800 && cp <= 0xDFFF) {
          cp = 0xFFFD;
        }
        if (out) appendUtf8(*out, cp);
        break;
      }
      default:
        return failAt("bad escape in string");
    }
    if (plain != 0 && out) out->push_back(plain);
    runStart = pos_;
  }
  return failAt("unterminated string");
}

bool JsonReader::scanNumber() noexcept {
  const std::size_t start = pos_;
  if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
  if (pos_ >= text_.size() || !isDigit(text_[pos_])) return failAt("bad number");
  if (text_[pos_] == '0') {
    ++pos_;
  } else {
    while (pos_ < text_.size() && isDigit(text_[pos_]))
      ++pos_;
  }
  if (pos_ < text_.size() && text_[pos_] == '.') {
    ++pos_;
    if (pos_ >= text_.size() || !isDigit(text_[pos_])) return failAt("bad number");
    while (pos_ < text_.size() && isDigit(text_[pos_]))
      ++pos_;
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    if (pos_ >= text_.size() || !isDigit(text_[pos_])) return failAt("bad number");
    while (pos_ < text_.size() && isDigit(text_[pos_]))
      ++pos_;
  }
  return pos_ > start;
}

bool JsonReader::scanLiteral(std::string_view word) noexcept {
  if (text_.substr(pos_, word.size()) != word) return failAt("bad literal");
  pos_ += word.size();
  return true;
}

bool JsonReader::readString(std::string& out) {
  if (peek() != Kind::kString) return failAt("expected a string");
  out.clear();
  return scanString(&out);
}

bool JsonReader::readInt64(std::int64_t& out) noexcept {
  if (peek() != Kind::kNumber) return failAt("expected an integer");
  const std::size_t start = pos_;
  if (!scanNumber()) return false;
  const std::string_view digits = text_.substr(start, pos_ - start);
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  if (ec != std::errc{} || ptr != digits.data() + digits.size()) {
    pos_ = start;
    return failAt("expected an integer in int64 range");
  }
  return true;
}

bool JsonReader::readBool(bool& out) noexcept {
  const Kind k = peek();
  if (k == Kind::kTrue) {
    out = true;
    return scanLiteral("true");
  }
  if (k == Kind::kFalse) {
    out = false;
    return scanLiteral("false");
  }
  return failAt("expected a boolean");
}

bool JsonReader::readNull() noexcept {
  if (peek() != Kind::kNull) return false;
  return scanLiteral("null");
}

bool JsonReader::skipContainer() {
  if (peek() == Kind::kObject) {
    if (!beginObject()) return false;
    while (nextKeyInto(nullptr)) {  // keys are validated, not copied
      if (!skipValue()) return false;
    }
    return ok();
  }
  if (!beginArray()) return false;
  while (nextElement()) {
    if (!skipValue()) return false;
  }
  return ok();
}

bool JsonReader::skipValue(std::string_view* span) {
  const Kind k = peek();
  const std::size_t start = pos_;
  bool good = false;
  switch (k) {
    case Kind::kObject:
    case Kind::kArray:
      good = skipContainer();
      break;
    case Kind::kString:
      good = scanString(nullptr);
      break;
    case Kind::kNumber:
      good = scanNumber();
      break;
    case Kind::kTrue:
      good = scanLiteral("true");
      break;
    case Kind::kFalse:
      good = scanLiteral("false");
      break;
    case Kind::kNull:
      good = scanLiteral("null");
      break;
    case Kind::kEnd:
      return failAt("unexpected end of input");
    case Kind::kInvalid:
      return failAt("unexpected character");
  }
  if (good && span) *span = text_.substr(start, pos_ - start);
  return good;
}

bool JsonReader::finish() noexcept {
  if (!ok()) return false;
  skipWhitespace();
  if (pos_ != text_.size()) return failAt("trailing data after JSON value");
  return true;
}

}  // namespace gte::json
