#pragma once
// Kubernetes resource.Quantity, parsed exactly (apimachinery pkg/api/resource): decimal SI, binary
// SI and e-notation suffixes, optional sign, values rounded up (away from zero) to 1n = 1e-9.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace gte {

// GCC's 128-bit integer; __extension__ keeps -Wpedantic quiet about it.
__extension__ typedef __int128 Int128;

class Quantity {
 public:
  Quantity() = default;
  static Quantity fromUnits(std::int64_t units) { return Quantity(Int128(units) * kNano); }
  static Quantity fromMillis(std::int64_t millis) {
    return Quantity(Int128(millis) * kNanoPerMilli);
  }

  // Signed count of nano-units (1e-9 of the base unit).
  Int128 nanos() const noexcept { return nanos_; }
  bool isZero() const noexcept { return nanos_ == 0; }
  bool isNegative() const noexcept { return nanos_ < 0; }
  // The exact integer value, if the quantity is a whole number of units within int64.
  std::optional<std::int64_t> wholeUnits() const noexcept;
  // Like Go's Value(): rounded up (away from zero) to an integer; saturates at int64 limits.
  std::int64_t ceilUnits() const noexcept;
  // The exact value in plain decimal ("32212254720", "0.75", "-2"): a quantity string every
  // reader parses back to this value (not the API server's canonical suffix form).
  std::string decimalText() const;
  // The value in thousandths when that is exact and within int64 (Go's MilliValue where it loses
  // nothing), else nullopt.
  std::optional<std::int64_t> exactMillis() const noexcept;

  Quantity& operator+=(const Quantity& other) noexcept {
    nanos_ += other.nanos_;
    return *this;
  }
  Quantity& operator-=(const Quantity& other) noexcept {
    nanos_ -= other.nanos_;
    return *this;
  }
  friend Quantity operator+(Quantity a, const Quantity& b) noexcept { return a += b; }
  friend Quantity operator-(Quantity a, const Quantity& b) noexcept { return a -= b; }
  friend bool operator==(const Quantity&, const Quantity&) = default;
  friend auto operator<=>(const Quantity& a, const Quantity& b) noexcept {
    return a.nanos_ <=> b.nanos_;
  }

  static constexpr Int128 kNano = 1'000'000'000;
  static constexpr Int128 kNanoPerMilli = 1'000'000;

 private:
  explicit Quantity(Int128 nanos) : nanos_(nanos) {}
  std::optional<std::int64_t> exactIn(Int128 unit) const noexcept;
  friend Result<Quantity> parseQuantity(std::string_view text);
  Int128 nanos_ = 0;
};

// Parses the textual form ("8", "100m", "1.5Gi", "2e3", "+1", ".5"). Errors name the problem.
Result<Quantity> parseQuantity(std::string_view text);

}  // namespace gte
