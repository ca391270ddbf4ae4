#include "kube/backoff.h"

#include <catch2/catch_test_macros.hpp>

using gte::kube::Backoff;
using gte::kube::BackoffOptions;
using std::chrono::milliseconds;

TEST_CASE("Backoff doubles with jitter up to the cap and resets after success") {
  Backoff backoff(BackoffOptions{milliseconds(100), milliseconds(1000)}, 42);
  // Ceilings 100, 200, 400, 800, 1000, 1000: each delay is in [ceiling/2, ceiling].
  const long ceilings[] = {100, 200, 400, 800, 1000, 1000, 1000};
  for (long ceiling : ceilings) {
    const auto delay = backoff.next().count();
    CHECK(delay >= ceiling / 2);
    CHECK(delay <= ceiling);
  }
  CHECK(backoff.failures() == 7);
  backoff.reset();
  CHECK(backoff.next().count() <= 100);
}

TEST_CASE("Backoff jitter differs between seeds (replicas do not retry in lockstep)") {
  Backoff a(BackoffOptions{milliseconds(10'000), milliseconds(10'000)}, 1);
  Backoff b(BackoffOptions{milliseconds(10'000), milliseconds(10'000)}, 2);
  bool differs = false;
  for (int i = 0; i < 5; ++i)
    differs = differs || a.next() != b.next();
  CHECK(differs);
}

TEST_CASE("Backoff survives many failures without overflowing") {
  Backoff backoff(BackoffOptions{milliseconds(800), milliseconds(30'000)}, 7);
  for (int i = 0; i < 100; ++i) {
    const auto delay = backoff.next().count();
    CHECK(delay > 0);
    CHECK(delay <= 30'000);
  }
}
