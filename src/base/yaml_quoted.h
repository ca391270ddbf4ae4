#pragma once
// A YAML double-quoted scalar, for the few YAML documents the tools print (a Node for a cluster
// file, a ResourceClaimTemplate): quotes and backslashes escaped, the text otherwise as is. What
// they quote is printable ASCII (label values, names, CEL expressions, which hold `!`, `'` and
// `[` that a plain scalar cannot start with), so nothing else needs escaping.
#include <string>
#include <string_view>

namespace gte {

inline std::string yamlQuoted(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

}  // namespace gte
