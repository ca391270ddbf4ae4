#pragma once
// Labels and annotations: a small sorted string -> string map with heterogeneous lookup.
#include <map>
#include <string>

namespace gte {

using StringMap = std::map<std::string, std::string, std::less<>>;

}  // namespace gte
