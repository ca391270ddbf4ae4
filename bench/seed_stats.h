#pragma once
// Figures reported over seeds (bench_preemption, bench_group_preemption): each seed's figure is
// one sample, and a table cell is their mean ± sample standard deviation.
#include <cmath>
#include <vector>

namespace gte::bench {

inline double mean(const std::vector<double>& samples) {
  double sum = 0;
  for (const double x : samples)
    sum += x;
  return samples.empty() ? 0 : sum / static_cast<double>(samples.size());
}

// 0 for fewer than two samples.
inline double sd(const std::vector<double>& samples) {
  if (samples.size() < 2) return 0;
  const double m = mean(samples);
  double sum = 0;
  for (const double x : samples)
    sum += (x - m) * (x - m);
  return std::sqrt(sum / static_cast<double>(samples.size() - 1));
}

}  // namespace gte::bench
