#include "sim/group_workload.h"

#include <algorithm>
#include <random>
#include <utility>

#include "sim/workload.h"

namespace gte::sim {
namespace {

std::discrete_distribution<std::size_t> distribution(const WeightedValues& values) {
  std::vector<int> weights;
  for (const auto& entry : values) {
    weights.push_back(entry.second);
  }
  return std::discrete_distribution<std::size_t>(weights.begin(), weights.end());
}

double traceMeanGpus(std::span<const SimPod> trace) {
  double gpus = 0;
  for (const SimPod& pod : trace) {
    gpus += pod.gpus;
  }
  return trace.empty() ? 0 : gpus / static_cast<double>(trace.size());
}

// Σ over pools (weighted by their GPUs) of the mean GPUs per member.
double meanMemberGpus(const std::vector<GroupPool>& pools) {
  double gpus = 0;
  double weights = 0;
  for (const GroupPool& pool : pools) {
    gpus += weightedMean(pool.memberGpus) * static_cast<double>(pool.gpus);
    weights += static_cast<double>(pool.gpus);
  }
  return weights == 0 ? 0 : gpus / weights;
}

}  // namespace

std::vector<GroupPool> defaultGroupPools(std::span<const SimNodeSpec> cluster) {
  std::vector<GroupPool> pools;
  for (const SimNodeSpec& node : cluster) {
    if (node.labels.empty()) {
      continue;
    }
    GroupPool* pool = nullptr;
    for (GroupPool& known : pools) {
      pool = known.gpuProduct == node.machine->model ? &known : pool;
    }
    if (pool == nullptr) {
      const int whole = node.machine->gpus;
      WeightedValues members = {{whole, 80}};
      if (whole >= 2) {
        members.emplace_back(whole / 2, 10);
      }
      if (whole >= 4) {
        members.emplace_back(whole / 4, 10);
      }
      pool = &pools.emplace_back(GroupPool{node.machine->model, std::move(members), 0});
    }
    pool->gpus += node.machine->gpus;
  }
  return pools;
}

GroupPool anyModelGroupPool(WeightedValues memberGpus, std::span<const SimNodeSpec> cluster) {
  GroupPool pool{"", std::move(memberGpus), 0};
  for (const SimNodeSpec& node : cluster) {
    pool.gpus += node.machine->gpus;
  }
  return pool;
}

double meanGpuTimePerArrival(const GroupWorkloadSpec& spec) {
  const double singleGpus =
      spec.singleTrace.empty() ? weightedMean(spec.singleGpus) : traceMeanGpus(spec.singleTrace);
  const double groupShare = spec.pools.empty() ? 0 : spec.groupShare;
  const double groupGpus = weightedMean(spec.groupSizes) * meanMemberGpus(spec.pools);
  return (1 - groupShare) * singleGpus * spec.singleDuration +
         groupShare * groupGpus * spec.groupDuration;
}

std::vector<TimedArrival> groupWorkload(const GroupWorkloadSpec& spec, std::int64_t capacityGpus,
                                        std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const double perArrival = meanGpuTimePerArrival(spec);
  const double rate =
      perArrival <= 0 ? 1 : spec.load * static_cast<double>(capacityGpus) / perArrival;
  std::exponential_distribution<double> gap(rate);
  std::exponential_distribution<double> singleTime(1 / spec.singleDuration);
  std::exponential_distribution<double> groupTime(1 / spec.groupDuration);
  std::bernoulli_distribution isGroup(spec.pools.empty() ? 0 : spec.groupShare);
  auto singleGpus = distribution(spec.singleGpus);
  std::uniform_int_distribution<std::size_t> fromTrace(
      0, spec.singleTrace.empty() ? 0 : spec.singleTrace.size() - 1);
  auto groupSize = distribution(spec.groupSizes);
  std::vector<int> poolWeights;
  for (const GroupPool& pool : spec.pools) {
    poolWeights.push_back(static_cast<int>(pool.gpus));
  }
  std::discrete_distribution<std::size_t> poolPick(poolWeights.begin(), poolWeights.end());
  std::vector<std::discrete_distribution<std::size_t>> memberGpus;
  for (const GroupPool& pool : spec.pools) {
    memberGpus.push_back(distribution(pool.memberGpus));
  }

  std::vector<TimedArrival> arrivals;
  arrivals.reserve(static_cast<std::size_t>(spec.arrivals));
  double now = 0;
  int groups = 0;
  for (int i = 0; i < spec.arrivals; ++i) {
    now += gap(rng);
    TimedArrival arrival;
    arrival.at = now;
    if (isGroup(rng)) {
      const std::size_t pool = poolPick(rng);
      arrival.members = spec.groupSizes[groupSize(rng)].first;
      const int gpus = spec.pools[pool].memberGpus[memberGpus[pool](rng)].first;
      arrival.group = "group-" + std::to_string(groups++);
      arrival.pod = podWithGpus(arrival.group, gpus);
      arrival.pod.gpuProduct = spec.pools[pool].gpuProduct;
      arrival.pod.nvlinkOnly =
          gpus >= 2 && std::find(spec.nvlinkMemberGpus.begin(), spec.nvlinkMemberGpus.end(),
                                 gpus) != spec.nvlinkMemberGpus.end();
      arrival.duration = groupTime(rng);
    } else {
      if (spec.singleTrace.empty()) {
        arrival.pod =
            podWithGpus("pod-" + std::to_string(i), spec.singleGpus[singleGpus(rng)].first);
      } else {
        arrival.pod = spec.singleTrace[fromTrace(rng)];
      }
      arrival.duration = singleTime(rng);
    }
    arrivals.push_back(std::move(arrival));
  }
  return arrivals;
}

}  // namespace gte::sim
