#include "shell_command.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>

namespace gte::testing {

std::pair<int, std::string> runShell(const std::string& command) {
  std::string out;
  FILE* p = ::popen((command + " 2>/dev/null").c_str(), "r");
  if (!p) return {-1, out};
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), p))
    out += buf.data();
  const int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace gte::testing
