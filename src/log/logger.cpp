#include "log/logger.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace gte::log {
namespace {

std::atomic<int> gLevel{static_cast<int>(Level::kInfo)};

const char* levelName(Level level) {
  switch (level) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "info";
}

bool needsQuotes(std::string_view v) {
  if (v.empty()) return true;
  for (char c : v) {
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
      return true;
    }
  }
  return false;
}

void appendValue(std::string& line, std::string_view v) {
  if (!needsQuotes(v)) {
    line.append(v);
    return;
  }
  line.push_back('"');
  for (char c : v) {
    if (c == '"' || c == '\\') {
      line.push_back('\\');
      line.push_back(c);
    } else if (c == '\n') {
      line.append("\\n");
    } else if (static_cast<unsigned char>(c) < 0x20) {
      line.push_back(' ');
    } else {
      line.push_back(c);
    }
  }
  line.push_back('"');
}

void appendTimestamp(std::string& line) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  const auto n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  line.append(buf, n);
  char ms[8];
  std::snprintf(ms, sizeof ms, ".%03dZ", static_cast<int>(millis));
  line.append(ms);
}

}  // namespace

bool parseLevel(std::string_view text, Level& out) {
  if (text == "debug") {
    out = Level::kDebug;
  } else if (text == "info") {
    out = Level::kInfo;
  } else if (text == "warn" || text == "warning") {
    out = Level::kWarn;
  } else if (text == "error") {
    out = Level::kError;
  } else {
    return false;
  }
  return true;
}

void setLevel(Level level) {
  gLevel.store(static_cast<int>(level), std::memory_order_relaxed);
}

bool enabled(Level level) {
  return static_cast<int>(level) >= gLevel.load(std::memory_order_relaxed);
}

void write(Level level, std::string_view message, std::initializer_list<Field> fields) {
  if (!enabled(level)) return;
  std::string line;
  line.reserve(128);
  line.append("ts=");
  appendTimestamp(line);
  line.append(" level=");
  line.append(levelName(level));
  line.append(" msg=");
  appendValue(line, message);
  for (const auto& [key, value] : fields) {
    line.push_back(' ');
    line.append(key);
    line.push_back('=');
    appendValue(line, value);
  }
  line.push_back('\n');
  // One write(2) per line: atomic with respect to other threads' lines for pipe-sized lines.
  std::size_t off = 0;
  while (off < line.size()) {
    const ssize_t n = ::write(STDERR_FILENO, line.data() + off, line.size() - off);
    if (n <= 0) break;
    off += static_cast<std::size_t>(n);
  }
}

}  // namespace gte::log
