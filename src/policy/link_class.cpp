#include "policy/link_class.h"

#include <array>

namespace gte {
namespace {

constexpr std::array<char, kPcieLevelCount> kPcieCodes = {'U', 'S', 'N', 'H', 'Q', 'P', 'O'};
constexpr std::array<std::string_view, kLinkClassCount> kLinkNames = {
    "unknown", "sys", "node", "phb", "pxb", "pix", "sameboard", "nvlink"};

}  // namespace

char pcieLevelCode(PcieLevel level) noexcept {
  return kPcieCodes[static_cast<std::size_t>(level)];
}

std::optional<PcieLevel> pcieLevelFromCode(char code) noexcept {
  for (std::size_t i = 0; i < kPcieCodes.size(); ++i) {
    if (kPcieCodes[i] == code) {
      return static_cast<PcieLevel>(i);
    }
  }
  return std::nullopt;
}

std::string_view linkClassName(LinkClass cls) noexcept {
  return kLinkNames[static_cast<std::size_t>(cls)];
}

std::optional<LinkClass> linkClassFromName(std::string_view name) noexcept {
  for (std::size_t i = 0; i < kLinkNames.size(); ++i) {
    if (kLinkNames[i] == name) {
      return static_cast<LinkClass>(i);
    }
  }
  return std::nullopt;
}

}  // namespace gte
