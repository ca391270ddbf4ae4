#pragma once
// The strings of one parsed DRA object (a ResourceSlice, a DeviceClass) kept in one buffer, each
// distinct string once: a slice of 8 GPUs repeats its attribute names, product name and versions 8
// times, and 5,000 such nodes are kept in memory (docs/dra.md, "What is kept"). A TextRef is an
// offset and length into that buffer; the object that owns the buffer turns it into a string_view.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

namespace gte::dra {

struct TextRef {
  std::uint32_t offset = 0;
  std::uint32_t length = 0;
  friend bool operator==(const TextRef&, const TextRef&) = default;
};

class TextBuffer {
 public:
  std::string_view view(TextRef ref) const noexcept {
    return std::string_view(text_).substr(ref.offset, ref.length);
  }
  std::size_t bytes() const noexcept { return text_.capacity(); }
  const std::string& text() const noexcept { return text_; }

 private:
  friend class TextInterner;
  std::string text_;
};

// Fills a TextBuffer while an object is parsed; the map of what is already stored is dropped with
// the interner, so the kept object holds only the buffer.
class TextInterner {
 public:
  explicit TextInterner(TextBuffer& buffer) : buffer_(buffer) {}
  TextRef intern(std::string_view value);
  // Gives back the buffer's spare capacity (call once, after the last intern).
  void shrink() { buffer_.text_.shrink_to_fit(); }

 private:
  TextBuffer& buffer_;
  std::unordered_map<std::string, TextRef> known_;
};

}  // namespace gte::dra
