#pragma once
// Frames a watch response body into events. The API server writes one JSON object per line; the
// bytes arrive in arbitrary chunks (an event may span several chunks, a chunk may hold several
// events), so partial lines are buffered until their newline arrives.
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace gte::kube {

class LineSplitter {
 public:
  // A single event larger than this is treated as a broken stream (a Node is a few KB).
  static constexpr std::size_t kDefaultMaxLine = 64u << 20;
  explicit LineSplitter(std::size_t maxLine = kDefaultMaxLine) : maxLine_(maxLine) {}

  // Calls onLine for each complete non-empty line in order (without the newline); stops early and
  // returns false when onLine returns false or a line exceeds the limit (then overflowed() is
  // true).
  bool feed(std::string_view chunk, const std::function<bool(std::string_view)>& onLine);
  // Bytes of an unterminated last line (a stream cut mid-event).
  std::size_t pending() const { return partial_.size(); }
  bool overflowed() const { return overflowed_; }

 private:
  std::size_t maxLine_;
  std::string partial_;
  bool overflowed_ = false;
};

}  // namespace gte::kube
