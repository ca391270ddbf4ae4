#pragma once
// Runs a shell command from an HTTP test (curl, openssl, the extender's own CLI).
#include <string>
#include <utility>

namespace gte::testing {

// The command's exit status (-1 when it did not exit normally) and its stdout; stderr is dropped.
std::pair<int, std::string> runShell(const std::string& command);

}  // namespace gte::testing
