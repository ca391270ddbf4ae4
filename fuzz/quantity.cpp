// Quantity parser (resource requests, limits and allocatable in every Pod and Node the extender
// reads). Beyond "no crash, no UB": an accepted quantity is consistent with itself.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.h"
#include "model/quantity.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using gte::fuzz::check;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto parsed = gte::parseQuantity(text);
  if (!parsed) {
    check(!parsed.error().message.empty(), "a refused quantity says why");
    return 0;
  }
  const gte::Quantity& q = *parsed;
  check(q.isZero() == (q.nanos() == 0), "isZero matches the value");
  check(q.isNegative() == (q.nanos() < 0), "isNegative matches the value");
  if (text.front() == '-') check(q.nanos() <= 0, "a leading '-' never gives a positive value");
  if (text.front() != '-') check(q.nanos() >= 0, "no leading '-' never gives a negative value");
  if (const auto whole = q.wholeUnits()) {
    check(q.ceilUnits() == *whole, "a whole quantity rounds to itself");
    check(q == gte::Quantity::fromUnits(*whole), "a whole quantity equals its units");
  }
  if (q.isZero()) check(q.ceilUnits() == 0, "zero rounds to zero");
  if (q.nanos() > 0) check(q.ceilUnits() >= 1, "a positive quantity rounds up to at least 1");
  if (q.nanos() < 0) check(q.ceilUnits() <= -1, "a negative quantity rounds away from zero");
  const auto again = gte::parseQuantity(text);
  check(again.ok() && *again == q, "parsing is deterministic");
  return 0;
}
