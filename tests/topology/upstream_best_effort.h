#pragma once
// A literal port of go-gpuallocator's best-effort policy (besteffort_policy.go at 876e7b7):
// exhaustive partition enumeration, no memoisation. The reference the fast prediction must match.
#include <vector>

#include "topology/pair_table.h"

namespace gte::testing {

// Devices are GPU indices; -1 is upstream's nil padding device.
inline int upstreamSetScore(const PairTable& table, const std::vector<int>& set) {
  int score = 0;
  for (std::size_t a = 0; a < set.size(); ++a) {
    for (std::size_t b = a + 1; b < set.size(); ++b) {
      if (set[a] >= 0 && set[b] >= 0) {
        score +=
            table.pluginScore[static_cast<std::size_t>(set[a])][static_cast<std::size_t>(set[b])];
      }
    }
  }
  return score;
}

inline int paddingOf(const std::vector<int>& set) {
  int count = 0;
  for (int d : set) {
    count += d < 0 ? 1 : 0;
  }
  return count;
}

inline bool containsAll(const std::vector<int>& set, const std::vector<int>& subset) {
  for (int d : subset) {
    bool found = false;
    for (int s : set) {
      found = found || s == d;
    }
    if (!found) {
      return false;
    }
  }
  return true;
}

template <typename Callback>
void iterateSets(const std::vector<int>& devices, int size, Callback&& callback) {
  const int n = static_cast<int>(devices.size());
  if (size <= 0 || size > n) {
    return;
  }
  std::vector<int> idx(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) {
    idx[static_cast<std::size_t>(i)] = i;
  }
  while (true) {
    std::vector<int> set;
    for (int i : idx) {
      set.push_back(devices[static_cast<std::size_t>(i)]);
    }
    callback(set);
    int i = size - 1;
    while (i >= 0 && idx[static_cast<std::size_t>(i)] == n - size + i) {
      --i;
    }
    if (i < 0) {
      return;
    }
    ++idx[static_cast<std::size_t>(i)];
    for (int j = i + 1; j < size; ++j) {
      idx[static_cast<std::size_t>(j)] = idx[static_cast<std::size_t>(j - 1)] + 1;
    }
  }
}

template <typename Callback>
void iteratePartitions(std::vector<int> devices, int size, int padding,
                       std::vector<std::vector<int>>& accum, Callback&& callback) {
  if (size == static_cast<int>(devices.size())) {
    accum.push_back(devices);
    callback(accum);
    accum.pop_back();
    return;
  }
  const int first = devices[0];
  std::vector<int> rest(devices.begin() + 1, devices.end());
  // Upstream: iterateGPUSets(devices[1:], size-1) with positions; padding entries are distinct
  // positions even though they are all nil, so iterate over positions.
  std::vector<int> positions(rest.size());
  for (std::size_t i = 0; i < rest.size(); ++i) {
    positions[i] = static_cast<int>(i);
  }
  iterateSets(positions, size - 1, [&](const std::vector<int>& chosen) {
    std::vector<int> set{first};
    std::vector<bool> taken(rest.size(), false);
    for (int p : chosen) {
      set.push_back(rest[static_cast<std::size_t>(p)]);
      taken[static_cast<std::size_t>(p)] = true;
    }
    const int p = paddingOf(set);
    if (!(p == 0 || p == padding)) {
      return;
    }
    std::vector<int> remaining;
    for (std::size_t i = 0; i < rest.size(); ++i) {
      if (!taken[i]) {
        remaining.push_back(rest[i]);
      }
    }
    accum.push_back(set);
    iteratePartitions(remaining, size, padding, accum, callback);
    accum.pop_back();
  });
}

inline std::vector<int> upstreamAllocate(const PairTable& table, const std::vector<int>& available,
                                         const std::vector<int>& required, int size) {
  if (size <= 0 || static_cast<int>(available.size()) < size ||
      static_cast<int>(required.size()) > size) {
    return {};
  }
  std::vector<std::vector<int>> best;
  bool haveBest = false;
  int bestScore = 0;
  const auto consider = [&](const std::vector<std::vector<int>>& candidate) {
    bool ok = false;
    for (const auto& set : candidate) {
      ok = ok || (containsAll(set, required) && paddingOf(set) == 0);
    }
    if (!ok) {
      return;
    }
    int score = 0;
    for (const auto& set : candidate) {
      score += upstreamSetScore(table, set);
    }
    if (!haveBest || score > bestScore) {
      best = candidate;
      bestScore = score;
      haveBest = true;
    }
  };
  if (size == 1) {
    for (int d : available) {
      consider({{d}});
    }
  } else {
    std::vector<int> devices = available;
    while (devices.size() % static_cast<std::size_t>(size) != 0) {
      devices.push_back(-1);
    }
    std::vector<std::vector<int>> accum;
    iteratePartitions(devices, size, paddingOf(devices), accum, consider);
  }
  std::vector<int> chosen;
  int chosenScore = 0;
  for (const auto& set : best) {
    if (paddingOf(set) == 0 && containsAll(set, required)) {
      const int score = upstreamSetScore(table, set);
      if (chosen.empty() || score > chosenScore) {
        chosen = set;
        chosenScore = score;
      }
    }
  }
  return chosen;
}

}  // namespace gte::testing
