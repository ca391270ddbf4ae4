#include "kube/file_text.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gte::kube {

Result<std::string> readFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error{ErrorCode::kNotFound, "cannot open " + path + ": " + std::strerror(errno)};
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return Error{ErrorCode::kUnavailable, "cannot read " + path};
  return std::move(text).str();
}

}  // namespace gte::kube
