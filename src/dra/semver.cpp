#include "dra/semver.h"

#include <charconv>

namespace gte::dra {
namespace {

bool isDigits(std::string_view text) noexcept {
  if (text.empty()) return false;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

std::optional<std::uint64_t> number(std::string_view text) noexcept {
  if (!isDigits(text) || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

bool identifierChars(std::string_view text) noexcept {
  if (text.empty()) return false;
  for (const char c : text) {
    const bool ok =
        (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
    if (!ok) return false;
  }
  return true;
}

// Every dot-separated identifier valid; numeric ones without leading zeros (pre-release only).
bool identifiers(std::string_view text, bool numericRules) noexcept {
  while (true) {
    const std::size_t dot = text.find('.');
    const std::string_view part = text.substr(0, dot);
    if (!identifierChars(part)) return false;
    if (numericRules && isDigits(part) && part.size() > 1 && part[0] == '0') return false;
    if (dot == std::string_view::npos) return true;
    text.remove_prefix(dot + 1);
  }
}

std::strong_ordering compareIdentifier(std::string_view a, std::string_view b) noexcept {
  const bool aNumeric = isDigits(a);
  const bool bNumeric = isDigits(b);
  if (aNumeric && bNumeric) {
    if (a.size() != b.size()) return a.size() <=> b.size();  // no leading zeros: longer is bigger
    return a.compare(b) <=> 0;
  }
  if (aNumeric != bNumeric) {
    return aNumeric ? std::strong_ordering::less : std::strong_ordering::greater;
  }
  return a.compare(b) <=> 0;
}

}  // namespace

std::strong_ordering operator<=>(const SemVer& a, const SemVer& b) noexcept {
  if (auto c = a.major <=> b.major; c != 0) return c;
  if (auto c = a.minor <=> b.minor; c != 0) return c;
  if (auto c = a.patch <=> b.patch; c != 0) return c;
  if (a.prerelease.empty() || b.prerelease.empty()) {
    // A release ranks above its pre-releases.
    return a.prerelease.empty() <=> b.prerelease.empty();
  }
  std::string_view x = a.prerelease;
  std::string_view y = b.prerelease;
  while (true) {
    const std::size_t xd = x.find('.');
    const std::size_t yd = y.find('.');
    if (auto c = compareIdentifier(x.substr(0, xd), y.substr(0, yd)); c != 0) return c;
    if (xd == std::string_view::npos || yd == std::string_view::npos) {
      // The one with more identifiers ranks higher.
      return (xd != std::string_view::npos) <=> (yd != std::string_view::npos);
    }
    x.remove_prefix(xd + 1);
    y.remove_prefix(yd + 1);
  }
}

std::optional<SemVer> parseSemVer(std::string_view text) noexcept {
  const std::size_t plus = text.find('+');
  if (plus != std::string_view::npos) {
    if (!identifiers(text.substr(plus + 1), false)) return std::nullopt;
    text = text.substr(0, plus);
  }
  SemVer out;
  const std::size_t dash = text.find('-');
  if (dash != std::string_view::npos) {
    out.prerelease = text.substr(dash + 1);
    if (!identifiers(out.prerelease, true)) return std::nullopt;
    text = text.substr(0, dash);
  }
  const std::size_t first = text.find('.');
  const std::size_t second = first == std::string_view::npos ? first : text.find('.', first + 1);
  if (second == std::string_view::npos) return std::nullopt;
  const auto major = number(text.substr(0, first));
  const auto minor = number(text.substr(first + 1, second - first - 1));
  const auto patch = number(text.substr(second + 1));
  if (!major || !minor || !patch) return std::nullopt;
  out.major = *major;
  out.minor = *minor;
  out.patch = *patch;
  return out;
}

}  // namespace gte::dra
