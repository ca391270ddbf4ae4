#include "model/quantity.h"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

using gte::Int128;
using gte::parseQuantity;

namespace {

constexpr Int128 kN = 1'000'000'000;

Int128 nanosOf(std::string_view text) {
  auto q = parseQuantity(text);
  REQUIRE(q.ok());
  return q->nanos();
}

}  // namespace

TEST_CASE("Quantity parses every suffix and exponent form exactly") {
  struct Case {
    const char* text;
    Int128 nanos;
  };
  // Values in nano-units; the arithmetic is in the comment where it is not obvious.
  const Case cases[] = {
      {"8", 8 * kN},
      {"+1", kN},
      {"01", kN},
      {"0", 0},
      {"-2", -2 * kN},
      {"100m", 100'000'000},
      {"1.5", 1'500'000'000},
      {".5", 500'000'000},
      {"5.", 5 * kN},
      {"1n", 1},
      {"1u", 1000},
      {"1k", 1000 * kN},
      {"1M", 1'000'000 * kN},
      {"1G", Int128{1'000'000'000} * kN},
      {"1T", Int128{1'000'000'000'000} * kN},
      {"1P", Int128{1'000'000'000'000'000} * kN},
      {"1E", Int128{1'000'000'000'000'000'000} * kN},  // E alone is exa
      {"1E3", 1000 * kN},                              // E with digits is an exponent
      {"2e0", 2 * kN},
      {"5e-3", 5'000'000},
      {"1.5e3", 1500 * kN},
      {"1Ki", 1024 * kN},
      {"1.5Gi", Int128{1610612736} * kN},  // 1.5 * 2^30
      {"1Ei", (Int128{1} << 60) * kN},
      {"1.5Mi", 1572864 * kN},
      {"0.0000000001", 1},    // below 1n: rounded up (away from zero) to 1n
      {"-0.0000000001", -1},  // away from zero for negatives too
      {"1.0000000001", kN + 1},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    CHECK(nanosOf(c.text) == c.nanos);
  }
}

TEST_CASE("Quantity rejects malformed text with a message naming it") {
  for (const char* bad :
       {"", "+", "-", ".", "1K", "1Kb", "1e", "1e+", "1..5", "1.5.5", "abc", "1 ", " 1", "1ee3",
        "0x10", "1e1001", "99999999999999999999999999999999999999999"}) {
    CAPTURE(bad);
    auto q = parseQuantity(bad);
    REQUIRE_FALSE(q.ok());
    CHECK(q.error().message.find("invalid quantity") != std::string::npos);
  }
}

TEST_CASE("Quantity whole and ceiling units") {
  CHECK(parseQuantity("4")->wholeUnits() == 4);
  CHECK_FALSE(parseQuantity("1500m")->wholeUnits().has_value());
  CHECK(parseQuantity("1500m")->ceilUnits() == 2);
  CHECK(parseQuantity("-1500m")->ceilUnits() == -2);
  CHECK(parseQuantity("2000m")->wholeUnits() == 2);
}

TEST_CASE("Quantity thousandths and plain decimal text read back exactly") {
  CHECK(parseQuantity("1500m")->exactMillis() == 1500);
  CHECK(parseQuantity("1Gi")->exactMillis() == std::int64_t{1073741824000});
  CHECK_FALSE(parseQuantity("1u")->exactMillis().has_value());
  CHECK(gte::Quantity::fromMillis(750) == *parseQuantity("750m"));
  for (const char* text : {"0", "30Gi", "750m", "-2", "1n", "12345678901.000000001", "8E"}) {
    INFO(text);
    const gte::Quantity q = *parseQuantity(text);
    const auto back = parseQuantity(q.decimalText());
    REQUIRE(back.ok());
    CHECK(*back == q);
  }
  CHECK(parseQuantity("30Gi")->decimalText() == "32212254720");
  CHECK(parseQuantity("750m")->decimalText() == "0.75");
  CHECK(parseQuantity("-1500m")->decimalText() == "-1.5");
}
