#pragma once
// What a fuzz entry point does when an invariant breaks: say which, then abort, so libFuzzer
// records the input as a crash and the corpus replay test fails on it.
#include <cstdio>
#include <cstdlib>

namespace gte::fuzz {

inline void check(bool holds, const char* invariant) {
  if (holds) return;
  std::fprintf(stderr, "fuzz invariant broken: %s\n", invariant);
  std::abort();
}

}  // namespace gte::fuzz
