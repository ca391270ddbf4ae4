#include "kube/object_name.h"

namespace gte::kube {
namespace {

bool isLowerAlnum(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

}  // namespace

bool isDns1123Label(std::string_view name) noexcept {
  if (name.empty() || name.size() > 63) return false;
  if (!isLowerAlnum(name.front()) || !isLowerAlnum(name.back())) return false;
  for (const char c : name) {
    if (!isLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

bool isDns1123Subdomain(std::string_view name) noexcept {
  if (name.empty() || name.size() > 253) return false;
  std::size_t start = 0;
  for (;;) {
    const auto dot = name.find('.', start);
    const auto label = name.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (!isDns1123Label(label)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace gte::kube
