#include "model/quantity.h"

#include <array>
#include <limits>
#include <string>

namespace gte {
namespace {

constexpr Int128 kInt128Max = ~(Int128{1} << 127);
// Go's Quantity accessors saturate at int64 in the target unit; larger values are rejected here.
constexpr Int128 kMaxNanos = Int128{std::numeric_limits<std::int64_t>::max()} * Quantity::kNano;
constexpr int kMaxDigits = 38;  // 10^38 < 2^127
constexpr int kMaxExponent = 1000;

struct Suffix {
  int exp10 = 0;
  int exp2 = 0;
};

bool parseSuffix(std::string_view s, Suffix& out) {
  static constexpr std::array<std::pair<std::string_view, int>, 9> kDecimal{{{"n", -9},
                                                                             {"u", -6},
                                                                             {"m", -3},
                                                                             {"", 0},
                                                                             {"k", 3},
                                                                             {"M", 6},
                                                                             {"G", 9},
                                                                             {"T", 12},
                                                                             {"P", 15}}};
  static constexpr std::array<std::pair<std::string_view, int>, 6> kBinary{
      {{"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"Ti", 40}, {"Pi", 50}, {"Ei", 60}}};
  for (const auto& [name, e] : kDecimal) {
    if (s == name) {
      out.exp10 = e;
      return true;
    }
  }
  if (s == "E") {  // exa; "E" followed by digits is an exponent instead
    out.exp10 = 18;
    return true;
  }
  for (const auto& [name, e] : kBinary) {
    if (s == name) {
      out.exp2 = e;
      return true;
    }
  }
  if (s.size() < 2 || (s[0] != 'e' && s[0] != 'E')) return false;
  std::size_t i = 1;
  bool negative = false;
  if (s[i] == '+' || s[i] == '-') {
    negative = s[i] == '-';
    ++i;
  }
  if (i >= s.size()) return false;
  int value = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    value = value * 10 + (s[i] - '0');
    if (value > kMaxExponent) return false;
  }
  out.exp10 = negative ? -value : value;
  return true;
}

bool mulOverflows(Int128 a, Int128 b, Int128& out) {
  return __builtin_mul_overflow(a, b, &out);
}

Error bad(std::string_view text, std::string_view why) {
  return invalidArgument("invalid quantity \"" + std::string(text.substr(0, 64)) +
                         "\": " + std::string(why));
}

}  // namespace

// The value as a whole count of `unit` nanos, when it is one and fits int64.
std::optional<std::int64_t> Quantity::exactIn(Int128 unit) const noexcept {
  if (nanos_ % unit != 0) return std::nullopt;
  const Int128 count = nanos_ / unit;
  if (count > std::numeric_limits<std::int64_t>::max() ||
      count < std::numeric_limits<std::int64_t>::min()) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(count);
}

std::optional<std::int64_t> Quantity::wholeUnits() const noexcept {
  return exactIn(kNano);
}

std::optional<std::int64_t> Quantity::exactMillis() const noexcept {
  return exactIn(kNanoPerMilli);
}

std::string Quantity::decimalText() const {
  const bool negative = nanos_ < 0;
  Int128 rest = negative ? -nanos_ : nanos_;
  Int128 fraction = rest % kNano;
  Int128 units = rest / kNano;
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(units % 10)));
    units /= 10;
  } while (units != 0);
  if (fraction != 0) {
    std::string decimals(9, '0');
    for (int i = 8; i >= 0; --i) {
      decimals[static_cast<std::size_t>(i)] =
          static_cast<char>('0' + static_cast<int>(fraction % 10));
      fraction /= 10;
    }
    while (decimals.back() == '0')
      decimals.pop_back();
    digits += '.';
    digits += decimals;
  }
  return negative ? "-" + digits : digits;
}

std::int64_t Quantity::ceilUnits() const noexcept {
  Int128 units = nanos_ / kNano;
  if (nanos_ % kNano != 0) units += nanos_ > 0 ? 1 : -1;
  if (units > std::numeric_limits<std::int64_t>::max())
    return std::numeric_limits<std::int64_t>::max();
  if (units < std::numeric_limits<std::int64_t>::min())
    return std::numeric_limits<std::int64_t>::min();
  return static_cast<std::int64_t>(units);
}

Result<Quantity> parseQuantity(std::string_view text) {
  if (text.empty()) return bad(text, "empty");
  std::size_t i = 0;
  bool negative = false;
  if (text[i] == '+' || text[i] == '-') {
    negative = text[i] == '-';
    ++i;
  }
  // Collect the significant digits (integer and fraction) and count fraction digits.
  Int128 mantissa = 0;
  int digits = 0;
  int fraction = 0;
  int dropped = 0;  // fraction digits beyond kMaxDigits, handled as rounding
  bool droppedNonZero = false;
  bool sawDigit = false;
  bool sawPoint = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.') {
      if (sawPoint) return bad(text, "two decimal points");
      sawPoint = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    sawDigit = true;
    if (sawPoint) ++fraction;
    if (digits == 0 && c == '0') continue;  // leading zeros carry no value
    if (digits >= kMaxDigits) {
      if (!sawPoint) return bad(text, "too many digits");
      ++dropped;
      droppedNonZero = droppedNonZero || c != '0';
      continue;
    }
    mantissa = mantissa * 10 + (c - '0');
    ++digits;
  }
  if (!sawDigit) return bad(text, "no digits");
  Suffix suffix;
  if (!parseSuffix(text.substr(i), suffix)) return bad(text, "unknown suffix");

  // value = mantissa * 10^(exp10 - fraction + dropped) * 2^exp2; nanos = value * 10^9.
  Int128 value = mantissa;
  for (int b = 0; b < suffix.exp2; ++b) {
    if (mulOverflows(value, 2, value)) return bad(text, "too large");
  }
  int shift = suffix.exp10 - fraction + dropped + 9;
  bool roundUp = droppedNonZero;
  if (shift >= 0) {
    for (int s = 0; s < shift && value != 0; ++s) {
      if (mulOverflows(value, 10, value)) return bad(text, "too large");
    }
  } else {
    for (int s = 0; s < -shift && value != 0; ++s) {
      roundUp = roundUp || value % 10 != 0;
      value /= 10;
    }
  }
  if (roundUp) {
    if (value == kInt128Max) return bad(text, "too large");
    value += 1;  // away from zero, applied before the sign
  }
  if (value > kMaxNanos) return bad(text, "too large");
  Quantity q;
  q.nanos_ = negative ? -value : value;
  return q;
}

}  // namespace gte
