#include "agent/mig_profile_code.h"

namespace gte::agent {

std::optional<char> profileCode(std::string_view profileName, int memorySlices) {
  const std::size_t g = profileName.find("g.");
  if (g != 1 || profileName.find("c.") != std::string_view::npos) {
    return std::nullopt;  // not "<k>g.<mem>gb" (compute-instance profiles are not GPU instances)
  }
  const char sm = profileName[0];
  const std::size_t plus = profileName.find_first_of("+-", 2);
  const std::string_view suffix =
      plus == std::string_view::npos ? std::string_view() : profileName.substr(plus);
  if (!suffix.empty() && !(sm == '1' && suffix == "+me" && memorySlices == 1)) {
    return std::nullopt;  // +me.all, +gfx, -me: products the extender has no table for
  }
  switch (sm) {
    case '1':
      if (!suffix.empty()) return '7';
      if (memorySlices == 1) return '0';
      if (memorySlices == 2) return '9';
      return std::nullopt;
    case '2':
      return memorySlices == 2 ? std::optional<char>('1') : std::nullopt;
    case '3':
      return memorySlices == 4 ? std::optional<char>('2') : std::nullopt;
    case '4':
      return memorySlices == 4 ? std::optional<char>('3') : std::nullopt;
    case '7':
      return memorySlices == 8 ? std::optional<char>('4') : std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace gte::agent
