#pragma once
// Structured log lines on stderr: `ts=... level=... msg="..." key=value ...` (logfmt), one write
// per line so concurrent threads never interleave within a line.
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace gte::log {

enum class Level { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// Parses "debug", "info", "warn"/"warning", "error".
bool parseLevel(std::string_view text, Level& out);
void setLevel(Level level);
bool enabled(Level level);

using Field = std::pair<std::string_view, std::string_view>;

void write(Level level, std::string_view message, std::initializer_list<Field> fields = {});

inline void debug(std::string_view m, std::initializer_list<Field> f = {}) {
  write(Level::kDebug, m, f);
}
inline void info(std::string_view m, std::initializer_list<Field> f = {}) {
  write(Level::kInfo, m, f);
}
inline void warn(std::string_view m, std::initializer_list<Field> f = {}) {
  write(Level::kWarn, m, f);
}
inline void error(std::string_view m, std::initializer_list<Field> f = {}) {
  write(Level::kError, m, f);
}

}  // namespace gte::log
