#include "sim/workload.h"

#include <algorithm>
#include <charconv>
#include <random>
#include <string>
#include <utility>

#include "sim/comma_items.h"
#include "sim/weighted_values.h"

namespace gte::sim {

std::vector<SimPod> arrivalSequence(std::span<const SimPod> trace, std::int64_t capacityGpus,
                                    int targetPercent, std::uint64_t seed) {
  std::vector<std::size_t> order(trace.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    order[i] = i;
  }
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<SimPod> arrivals;
  std::int64_t arrived = 0;  // memory slices
  for (const std::size_t index : order) {
    if (arrived * 100 >= capacityGpus * kMigMemorySlices * targetPercent) {
      break;
    }
    arrivals.push_back(trace[index]);
    arrived += trace[index].demandSlices();
  }
  return arrivals;
}

Result<SyntheticMix> parseSyntheticMix(std::string_view text) {
  auto weights = parseWeightedValues(text, 0, 8, "gpus");
  if (!weights.ok()) {
    return weights.error();
  }
  SyntheticMix mix;
  mix.weights = std::move(*weights);
  return mix;
}

Status addMigMix(SyntheticMix& mix, double share, std::string_view profiles,
                 const MigProduct& product) {
  if (!(share >= 0 && share <= 1)) {
    return invalidArgument("MIG share must lie in 0..1");
  }
  mix.migShare = share;
  mix.migWeights.clear();
  int total = 0;
  for (const std::string_view item : commaItems(profiles)) {
    const std::size_t colon = item.find(':');
    const MigProfile* profile =
        colon == std::string_view::npos ? nullptr : product.findByName(item.substr(0, colon));
    int weight = -1;
    const bool parsed =
        profile != nullptr &&
        std::from_chars(item.data() + colon + 1, item.data() + item.size(), weight).ptr ==
            item.data() + item.size();
    if (!parsed || weight < 0) {
      return invalidArgument("MIG mix item '" + std::string(item) + "': want <" + product.name +
                             " profile>:<weight>, e.g. 3g.40gb:20");
    }
    mix.migWeights.emplace_back(profile, weight);
    total += weight;
  }
  if (total == 0 && share > 0) {
    return invalidArgument("MIG mix '" + std::string(profiles) + "' has no positive weight");
  }
  return Ok{};
}

std::vector<SimPod> syntheticPods(const SyntheticMix& mix, int count, std::uint64_t seed) {
  std::vector<int> weights;
  for (const auto& entry : mix.weights) {
    weights.push_back(entry.second);
  }
  std::vector<int> migWeights;
  for (const auto& entry : mix.migWeights) {
    migWeights.push_back(entry.second);
  }
  std::mt19937_64 rng(seed);
  std::discrete_distribution<std::size_t> pick(weights.begin(), weights.end());
  std::discrete_distribution<std::size_t> pickMig(migWeights.begin(), migWeights.end());
  std::bernoulli_distribution isMig(mix.migShare);
  std::vector<SimPod> pods;
  pods.reserve(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    // No MIG share draws nothing extra: the whole-GPU sequence stays what it was.
    if (mix.migShare > 0 && isMig(rng)) {
      const MigProfile& profile = *mix.migWeights[pickMig(rng)].first;
      pods.push_back(SimPod{"synthetic-" + std::to_string(i), 1000 * profile.slices,
                            2048 * static_cast<std::int64_t>(profile.slices), 0, profile.name,
                            profile.slices});
      continue;
    }
    pods.push_back(podWithGpus("synthetic-" + std::to_string(i), mix.weights[pick(rng)].first));
  }
  return pods;
}

SimPod podWithGpus(std::string name, int gpus) {
  const std::int64_t cpu = gpus == 0 ? 2000 : 4000 * static_cast<std::int64_t>(gpus);
  const std::int64_t memory = gpus == 0 ? 4096 : 16384 * static_cast<std::int64_t>(gpus);
  return SimPod{std::move(name), cpu, memory, gpus};
}

}  // namespace gte::sim
