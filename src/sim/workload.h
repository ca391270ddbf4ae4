#pragma once
// The pod sequence a run replays: the FGD protocol draws pods in a seeded random order until the
// arrived GPU demand reaches a target share of the cluster's GPUs (130% by default), with no
// departures. The synthetic generator makes 0/1/2/4/8-GPU mixes for tests and `make bench`.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "sim/sim_pod.h"

namespace gte::sim {

// The trace's pods shuffled with `seed`, taken until their GPUs reach targetPercent of
// capacityGpus (or the trace ends). CPU-only pods ride along in their shuffled places.
std::vector<SimPod> arrivalSequence(std::span<const SimPod> trace, std::int64_t capacityGpus,
                                    int targetPercent, std::uint64_t seed);

// Share of pods per GPU count, e.g. "0:10,1:50,2:15,4:10,8:15".
struct SyntheticMix {
  std::vector<std::pair<int, int>> weights;  // (GPUs, relative weight)
};
Result<SyntheticMix> parseSyntheticMix(std::string_view text);

// `count` pods drawn from the mix with `seed`; 4 CPU cores and 16 GiB per GPU (2 cores and 4 GiB
// for CPU-only pods), like the trace's typical GPU pods.
std::vector<SimPod> syntheticPods(const SyntheticMix& mix, int count, std::uint64_t seed);

}  // namespace gte::sim
