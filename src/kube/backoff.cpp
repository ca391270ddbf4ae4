#include "kube/backoff.h"

#include <algorithm>

namespace gte::kube {

Backoff::Backoff(BackoffOptions options, std::uint64_t seed) : options_(options), random_(seed) {}

std::chrono::milliseconds Backoff::next() {
  // 2^failures, capped before it can overflow.
  const int doublings = std::min(failures_, 20);
  ++failures_;
  const auto ceiling =
      std::min<std::int64_t>(options_.initial.count() << doublings, options_.max.count());
  std::uniform_int_distribution<std::int64_t> jitter(ceiling / 2, ceiling);
  return std::chrono::milliseconds(jitter(random_));
}

}  // namespace gte::kube
