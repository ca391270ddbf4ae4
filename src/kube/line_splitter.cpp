#include "kube/line_splitter.h"

namespace gte::kube {
namespace {

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

}  // namespace

bool LineSplitter::feed(std::string_view chunk,
                        const std::function<bool(std::string_view)>& onLine) {
  while (!chunk.empty()) {
    const std::size_t newline = chunk.find('\n');
    if (newline == std::string_view::npos) {
      if (partial_.size() + chunk.size() > maxLine_) {
        overflowed_ = true;
        return false;
      }
      partial_.append(chunk);
      return true;
    }
    std::string_view line = chunk.substr(0, newline);
    chunk.remove_prefix(newline + 1);
    // Common case: the whole line is inside this chunk and nothing is buffered, so no copy.
    if (!partial_.empty()) {
      partial_.append(line);
      line = partial_;
    }
    const bool keepGoing = blank(line) || onLine(line);
    partial_.clear();
    if (!keepGoing) return false;
  }
  return true;
}

}  // namespace gte::kube
