#pragma once
// Percent-encodes a URL query value (continue tokens are base64 with '+', '/', '='; field selectors
// contain '!' and '='), keeping only RFC 3986 unreserved characters literal.
#include <string>
#include <string_view>

namespace gte::kube {

std::string queryEscape(std::string_view value);

}  // namespace gte::kube
