#include "model/rfc3339.h"

#include <charconv>

namespace gte {
namespace {

int digits(std::string_view text, std::size_t pos, std::size_t count, bool& good) {
  int value = 0;
  if (pos + count > text.size()) {
    good = false;
    return 0;
  }
  const auto result = std::from_chars(text.data() + pos, text.data() + pos + count, value);
  if (result.ec != std::errc() || result.ptr != text.data() + pos + count) good = false;
  return value;
}

// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm; no timezone database).
std::int64_t daysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

}  // namespace

std::optional<std::int64_t> parseRfc3339(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)
  bool good = text.size() >= 20 && text[4] == '-' && text[7] == '-' &&
              (text[10] == 'T' || text[10] == 't') && text[13] == ':' && text[16] == ':';
  if (!good) return std::nullopt;
  const int year = digits(text, 0, 4, good);
  const int month = digits(text, 5, 2, good);
  const int day = digits(text, 8, 2, good);
  const int hour = digits(text, 11, 2, good);
  const int minute = digits(text, 14, 2, good);
  const int second = digits(text, 17, 2, good);
  if (!good || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 ||
      second > 60) {
    return std::nullopt;
  }
  std::size_t pos = 19;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
      ++pos;
  }
  std::int64_t offset = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z') && pos + 1 == text.size()) {
    offset = 0;
  } else if (pos + 6 == text.size() && (text[pos] == '+' || text[pos] == '-') &&
             text[pos + 3] == ':') {
    const int offsetHours = digits(text, pos + 1, 2, good);
    const int offsetMinutes = digits(text, pos + 4, 2, good);
    if (!good) return std::nullopt;
    offset = (text[pos] == '+' ? 1 : -1) * (offsetHours * 3600 + offsetMinutes * 60);
  } else {
    return std::nullopt;
  }
  const std::int64_t days =
      daysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return days * 86400 + hour * 3600 + minute * 60 + second - offset;
}

}  // namespace gte
