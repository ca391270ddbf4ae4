#pragma once
// Semantic versions as CEL's `semver` values compare them (Semantic Versioning 2.0.0 precedence:
// major, minor, patch, then pre-release identifiers; build metadata ignored). DRA publishes
// version attributes (`driverVersion`, `cudaComputeCapability`) in this form.
#include <compare>
#include <cstdint>
#include <optional>
#include <string_view>

namespace gte::dra {

struct SemVer {
  std::uint64_t major = 0;
  std::uint64_t minor = 0;
  std::uint64_t patch = 0;
  std::string_view prerelease;  // dot-separated identifiers; empty for a release

  friend std::strong_ordering operator<=>(const SemVer& a, const SemVer& b) noexcept;
  friend bool operator==(const SemVer& a, const SemVer& b) noexcept {
    return (a <=> b) == std::strong_ordering::equal;
  }
};

// Strict: "MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]", no leading zeros in numeric parts, no "v".
// The returned prerelease points into `text`.
std::optional<SemVer> parseSemVer(std::string_view text) noexcept;

}  // namespace gte::dra
