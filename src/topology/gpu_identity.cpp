#include "topology/gpu_identity.h"

namespace gte {
namespace {

std::optional<unsigned> hexDigit(char c) noexcept {
  if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<unsigned>(c - 'a' + 10);
  if (c >= 'A' && c <= 'F') return static_cast<unsigned>(c - 'A' + 10);
  return std::nullopt;
}

// 1..maxDigits hex digits; nullopt when empty, too long or not hex.
std::optional<std::uint32_t> hexField(std::string_view text, std::size_t maxDigits) noexcept {
  if (text.empty() || text.size() > maxDigits) return std::nullopt;
  std::uint32_t value = 0;
  for (const char c : text) {
    const auto digit = hexDigit(c);
    if (!digit) return std::nullopt;
    value = value << 4 | *digit;
  }
  return value;
}

constexpr char kHex[] = "0123456789abcdef";

void appendHex(std::string& out, std::uint32_t value, int digits) {
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) {
    out += kHex[(value >> static_cast<unsigned>(shift)) & 0xfu];
  }
}

std::optional<PciAddress> pack(std::uint32_t domain, std::uint32_t bus, std::uint32_t device,
                               std::uint32_t function) noexcept {
  if (domain > 0xffff || bus > 0xff || device > 0x1f || function > 7) return std::nullopt;
  return domain << 16 | bus << 8 | device << 3 | function;
}

}  // namespace

std::optional<PciAddress> parsePciBusId(std::string_view text) noexcept {
  const std::size_t dot = text.rfind('.');
  if (dot == std::string_view::npos || dot + 2 != text.size()) return std::nullopt;
  const auto function = hexField(text.substr(dot + 1), 1);
  const std::string_view head = text.substr(0, dot);
  const std::size_t lastColon = head.rfind(':');
  if (lastColon == std::string_view::npos) return std::nullopt;
  const auto device = hexField(head.substr(lastColon + 1), 2);
  const std::string_view front = head.substr(0, lastColon);
  const std::size_t firstColon = front.rfind(':');
  std::optional<std::uint32_t> domain = 0;
  std::optional<std::uint32_t> bus;
  if (firstColon == std::string_view::npos) {
    bus = hexField(front, 2);
  } else {
    domain = hexField(front.substr(0, firstColon), 8);
    bus = hexField(front.substr(firstColon + 1), 2);
  }
  if (!function || !device || !domain || !bus) return std::nullopt;
  return pack(*domain, *bus, *device, *function);
}

std::string pciBusIdText(PciAddress address) {
  std::string out;
  appendHex(out, address >> 16, 4);
  out += ':';
  appendHex(out, (address >> 8) & 0xffu, 2);
  out += ':';
  appendHex(out, (address >> 3) & 0x1fu, 2);
  out += '.';
  appendHex(out, address & 7u, 1);
  return out;
}

std::string pciAddressToken(PciAddress address) {
  std::string out;
  appendHex(out, address >> 16, 4);
  appendHex(out, (address >> 8) & 0xffu, 2);
  appendHex(out, (address >> 3) & 0x1fu, 2);
  appendHex(out, address & 7u, 1);
  return out;
}

std::optional<PciAddress> parsePciAddressToken(std::string_view token) noexcept {
  if (token.size() != kPciAddressTokenLength) return std::nullopt;
  for (const char c : token) {
    // The token alphabet is lowercase only: one spelling per address.
    if (c >= 'A' && c <= 'F') return std::nullopt;
  }
  const auto domain = hexField(token.substr(0, 4), 4);
  const auto bus = hexField(token.substr(4, 2), 2);
  const auto device = hexField(token.substr(6, 2), 2);
  const auto function = hexField(token.substr(8, 1), 1);
  if (!domain || !bus || !device || !function) return std::nullopt;
  return pack(*domain, *bus, *device, *function);
}

std::optional<GpuUuid> parseGpuUuid(std::string_view text) noexcept {
  if (text.starts_with("GPU-")) text.remove_prefix(4);
  GpuUuid uuid{};
  std::size_t digits = 0;
  bool dashAllowed = false;
  for (const char c : text) {
    if (c == '-') {
      if (!dashAllowed) return std::nullopt;
      dashAllowed = false;
      continue;
    }
    const auto digit = hexDigit(c);
    if (!digit || digits == 2 * uuid.size()) return std::nullopt;
    auto& byte = uuid[digits / 2];
    byte = static_cast<std::uint8_t>(byte << 4 | *digit);
    ++digits;
    dashAllowed = digits < 2 * uuid.size();
  }
  if (digits != 2 * uuid.size()) return std::nullopt;
  return uuid;
}

std::optional<GpuUuid> parseGpuUuidToken(std::string_view token) noexcept {
  if (token.size() != kGpuUuidTokenLength) return std::nullopt;
  for (const char c : token) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return std::nullopt;
  }
  return parseGpuUuid(token);
}

std::string gpuUuidToken(const GpuUuid& uuid) {
  std::string out;
  out.reserve(kGpuUuidTokenLength);
  for (const std::uint8_t byte : uuid) {
    appendHex(out, byte, 2);
  }
  return out;
}

}  // namespace gte
