#pragma once
// A validating pull parser over an in-memory JSON text. It exists for two reasons nlohmann's DOM
// cannot serve: full-Node requests of 5,000 nodes (~16 MB) must be parsed in one streaming pass
// without building a DOM (~350 ms), and each node's raw bytes must be echoed back unchanged, which
// needs the byte span of every value. Errors are sticky: after the first one every call fails and
// error() says what and where.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gte::json {

enum class Kind { kObject, kArray, kString, kNumber, kTrue, kFalse, kNull, kEnd, kInvalid };

const char* kindName(Kind kind) noexcept;

class JsonReader {
 public:
  static constexpr int kDefaultMaxDepth = 128;
  explicit JsonReader(std::string_view text, int maxDepth = kDefaultMaxDepth) noexcept
      : text_(text), maxDepth_(maxDepth) {}

  // Kind of the next value, after whitespace. kEnd at end of input; kInvalid on a bad character.
  Kind peek() noexcept;

  // Objects: beginObject() consumes '{'; nextKey() yields each key (unescaped) and returns false
  // once '}' is consumed (or on error: check ok()).
  bool beginObject() noexcept;
  bool nextKey(std::string& key);
  // Arrays: beginArray() consumes '['; nextElement() returns true before each element.
  bool beginArray() noexcept;
  bool nextElement() noexcept;

  bool readString(std::string& out);
  bool readInt64(std::int64_t& out) noexcept;
  bool readBool(bool& out) noexcept;
  bool readNull() noexcept;  // consumes a null if next; false (no error) otherwise
  // A string or an integer, or null, which leaves `out` as it was (what Kubernetes writes for an
  // unset optional field); false on any other value, as readString and readInt64.
  bool readStringOrNull(std::string& out) { return readNull() || readString(out); }
  bool readInt64OrNull(std::int64_t& out) noexcept { return readNull() || readInt64(out); }
  // Skips (and validates) the next value; returns its exact byte span.
  bool skipValue(std::string_view* span = nullptr);
  // Only whitespace may remain.
  bool finish() noexcept;

  // For handing one value to a nested reader (a parser that takes a JsonReader of its own): the
  // text from the next value on, and the nesting depth still allowed under this reader's limit.
  // Once the nested reader has read exactly one value, consumed(n) moves this reader past its n
  // bytes, as skipValue() would have after validating them.
  std::string_view rest() noexcept {
    skipWhitespace();
    return text_.substr(pos_);
  }
  int depthLeft() const noexcept { return maxDepth_ - depth_; }
  void consumed(std::size_t n) noexcept { pos_ += n; }

  bool ok() const noexcept { return error_.empty(); }
  const std::string& error() const noexcept { return error_; }
  std::size_t offset() const noexcept { return pos_; }
  // Fails with a message about the value at the current position.
  bool fail(std::string_view message);

 private:
  void skipWhitespace() noexcept;
  bool nextKeyInto(std::string* key);  // nullptr: the key is checked and skipped
  bool expect(char c) noexcept;
  bool scanString(std::string* out);
  bool scanNumber() noexcept;
  bool scanLiteral(std::string_view word) noexcept;
  bool skipContainer();
  bool failAt(std::string_view message) noexcept;

  std::string_view text_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  int maxDepth_;
  // Per nesting level: whether the next element/key needs a comma first. Bit i = depth i.
  std::uint64_t needComma_[4] = {0, 0, 0, 0};
  std::string error_;
};

}  // namespace gte::json
