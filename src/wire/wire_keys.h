#pragma once
// Go's encoding/json matches struct fields to keys case-insensitively; so do we.
#include <string_view>

namespace gte::wire {

inline bool keyIs(std::string_view key, std::string_view field) noexcept {
  if (key.size() != field.size()) return false;
  for (std::size_t i = 0; i < key.size(); ++i) {
    char a = key[i];
    char b = field[i];
    if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z') b = static_cast<char>(b - 'A' + 'a');
    if (a != b) return false;
  }
  return true;
}

}  // namespace gte::wire
