#pragma once
// The pod sequence a run replays: the FGD protocol draws pods in a seeded random order until the
// arrived GPU demand reaches a target share of the cluster's GPUs (130% by default), with no
// departures. The synthetic generator makes 0/1/2/4/8-GPU and MIG mixes for tests and `make bench`.
// Demand counts memory slices so that MIG pods weigh what they occupy: a whole GPU is 8 slices.
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "policy/mig_product.h"
#include "sim/sim_pod.h"

namespace gte::sim {

// The trace's pods shuffled with `seed`, taken until their GPU demand (whole GPUs and MIG slices)
// reaches targetPercent of capacityGpus, MIG GPUs included (or the trace ends). CPU-only pods ride
// along in their shuffled places.
std::vector<SimPod> arrivalSequence(std::span<const SimPod> trace, std::int64_t capacityGpus,
                                    int targetPercent, std::uint64_t seed);

// Share of pods per GPU count, e.g. "0:10,1:50,2:15,4:10,8:15", and optionally a share of MIG
// pods with their own profile mix.
struct SyntheticMix {
  std::vector<std::pair<int, int>> weights;  // (GPUs, relative weight)
  double migShare = 0;                       // share of pods that ask for one MIG instance
  std::vector<std::pair<const MigProfile*, int>> migWeights;  // (profile, relative weight)
};
Result<SyntheticMix> parseSyntheticMix(std::string_view text);

// Adds MIG pods to `mix`: `share` (0..1) of the pods, with profiles drawn from `profiles`, e.g.
// "1g.10gb:40,2g.20gb:20,3g.40gb:20,4g.40gb:10,7g.80gb:10", names from `product` (which must
// outlive the mix).
Status addMigMix(SyntheticMix& mix, double share, std::string_view profiles,
                 const MigProduct& product);

// `count` pods drawn from the mix with `seed`; 4 CPU cores and 16 GiB per GPU (2 cores and 4 GiB
// for CPU-only pods), like the trace's typical GPU pods; a MIG pod 1 core and 2 GiB per memory
// slice. Without MIG share the draws are those of a mix without MIG.
std::vector<SimPod> syntheticPods(const SyntheticMix& mix, int count, std::uint64_t seed);

// A whole-GPU pod as the synthetic generator makes one: 4 cores and 16 GiB per GPU, 2 cores and
// 4 GiB without GPUs.
SimPod podWithGpus(std::string name, int gpus);

}  // namespace gte::sim
