#pragma once
// The command line of the preemption benches (bench_preemption, bench_group_preemption): every
// flag takes one value, written into the variable its entry names. An unknown flag, a flag without
// a value, or a value that is not what its variable holds (a whole number, a number, a
// comma-separated list of whole numbers) is refused with a message naming it, and the bench exits
// with status 2 rather than run with a value it did not mean.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace gte::bench {

struct Flag {
  std::string_view name;  // "--fills"
  std::variant<std::string*, int*, double*, std::vector<std::uint64_t>*> into;
  double min = 0;  // a number, or a list's item, below it is refused
};

namespace detail {

inline bool wholeNumber(std::string_view text, long long& out) {
  if (text.empty()) return false;
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  out = std::strtoll(copy.c_str(), &end, 10);
  return errno == 0 && end == copy.c_str() + copy.size();
}

inline bool number(std::string_view text, double& out) {
  if (text.empty()) return false;
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  out = std::strtod(copy.c_str(), &end);
  return errno == 0 && end == copy.c_str() + copy.size();
}

// "1,2,3": every item a whole number >= min, none empty.
inline bool wholeNumbers(std::string_view text, double min, std::vector<std::uint64_t>& out) {
  std::vector<std::uint64_t> items;
  while (true) {
    const std::size_t comma = text.find(',');
    long long item = 0;
    if (!wholeNumber(text.substr(0, comma), item) || item < 0 || static_cast<double>(item) < min) {
      return false;
    }
    items.push_back(static_cast<std::uint64_t>(item));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  out = std::move(items);
  return true;
}

inline bool assign(const Flag& flag, std::string_view value) {
  if (auto* text = std::get_if<std::string*>(&flag.into)) {
    **text = std::string(value);
    return true;
  }
  if (auto* whole = std::get_if<int*>(&flag.into)) {
    long long n = 0;
    if (!wholeNumber(value, n) || static_cast<double>(n) < flag.min || n > INT32_MAX) return false;
    **whole = static_cast<int>(n);
    return true;
  }
  if (auto* real = std::get_if<double*>(&flag.into)) {
    double x = 0;
    if (!number(value, x) || !(x >= flag.min)) return false;
    **real = x;
    return true;
  }
  return wholeNumbers(value, flag.min, *std::get<std::vector<std::uint64_t>*>(flag.into));
}

}  // namespace detail

// Reads argv into the flags' variables; false (after a message on stderr naming `program`) when
// the command line is refused.
inline bool parseFlags(int argc, char** argv, std::span<const Flag> flags, const char* program) {
  for (int i = 1; i < argc; i += 2) {
    const std::string_view name = argv[i];
    const Flag* flag = nullptr;
    for (const Flag& f : flags)
      if (f.name == name) flag = &f;
    if (flag == nullptr) {
      std::fprintf(stderr, "%s: unknown flag %s\n", program, argv[i]);
      return false;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s: %s needs a value\n", program, argv[i]);
      return false;
    }
    if (!detail::assign(*flag, argv[i + 1])) {
      std::fprintf(stderr, "%s: %s: '%s' is not a valid value\n", program, argv[i], argv[i + 1]);
      return false;
    }
  }
  return true;
}

}  // namespace gte::bench
