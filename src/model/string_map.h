#pragma once
// Labels and annotations: a small sorted string -> string map with heterogeneous lookup.
#include <map>
#include <string>
#include <string_view>

namespace gte {

using StringMap = std::map<std::string, std::string, std::less<>>;

// The value under `key`, or nullptr.
inline const std::string* findValue(const StringMap& map, std::string_view key) {
  const auto it = map.find(key);
  return it == map.end() ? nullptr : &it->second;
}

}  // namespace gte
