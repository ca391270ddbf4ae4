#pragma once
// Timing assertions mean something only in optimised builds without sanitizers; elsewhere (the
// debug, asan and tsan presets) the budget is 50 times larger, which still catches an algorithm
// gone exponential.
#include <chrono>

namespace gte::testing {

#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
inline constexpr bool kOptimisedBuild = true;
#else
inline constexpr bool kOptimisedBuild = false;
#endif

template <typename Duration>
constexpr Duration perfBudget(Duration optimised) {
  return kOptimisedBuild ? optimised : optimised * 50;
}

}  // namespace gte::testing
