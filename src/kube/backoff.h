#pragma once
// Jittered exponential backoff for reconnecting to the API server: the delay doubles per
// consecutive failure up to a cap, and each delay is drawn uniformly from [delay/2, delay] ("equal
// jitter") so many replicas restarting together do not hammer a recovering API server in lockstep.
#include <chrono>
#include <cstdint>
#include <random>

namespace gte::kube {

struct BackoffOptions {
  std::chrono::milliseconds initial{800};
  std::chrono::milliseconds max{30'000};
};

class Backoff {
 public:
  explicit Backoff(BackoffOptions options = {}, std::uint64_t seed = std::random_device{}());

  // The delay to wait before the next attempt; grows with each call until reset().
  std::chrono::milliseconds next();
  void reset() { failures_ = 0; }
  int failures() const { return failures_; }

 private:
  BackoffOptions options_;
  std::mt19937_64 random_;
  int failures_ = 0;
};

}  // namespace gte::kube
