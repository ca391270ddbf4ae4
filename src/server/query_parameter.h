#pragma once
// One parameter of a request target's query string ("/explain?pod=ml%2Ftrain"), percent-decoded
// ('+' reads as a space, as in HTML forms). Pure.
#include <optional>
#include <string>
#include <string_view>

namespace gte::server {

// nullopt when the parameter is absent or its escapes are malformed ("%zz", a lone '%').
std::optional<std::string> queryParameter(std::string_view target, std::string_view name);

}  // namespace gte::server
