#pragma once
// The placement-quality figures of one run: allocation ratio against arrived demand, the first
// failure overall and per request size, per size the share of pods that got an all-NVLink set and
// the share that *missed* (got a weaker link class than some feasible node offered at that
// moment), and the fragmentation measured during the run. For MIG pods: placed and failed, the
// failures where some GPU's slice counts covered the profile but no legal placement was free (the
// "slice counts merely add up" trap), and a MIG-naive chooser's invalid placements.
#include <span>
#include <string>
#include <vector>

#include "sim/simulator.h"

namespace gte::sim {

struct SizeMetrics {
  int gpus = 0;
  int pods = 0;
  int placed = 0;
  int failed = 0;
  double firstFailurePercent = -1;  // arrived demand (% of capacity) at the first failure; -1: none
  int fullyNvlink = 0;              // placed with every pair NVLink-joined (2+ GPUs)
  int missed = 0;                   // placed on a weaker link class than the best feasible offer
  int crossSocket = 0;              // placed with some pair across the inter-socket link (SYS)
};

struct MigMetrics {
  int pods = 0;
  int placed = 0;
  int failed = 0;                   // not running: no feasible node, or an invalid placement
  double firstFailurePercent = -1;  // arrived demand (% of capacity, in slices) at the first one
  int countsTrap = 0;  // failed although some GPU's free slice counts covered the profile
  int invalid = 0;     // a MIG-naive chooser sent the pod where the profile had no legal start
  int lost = 0;        // failed although some node had a legal free placement
  double sliceUtilisation = 0;  // MIG memory slices allocated, % of MIG slices, at the end
  struct Profile {
    std::string name;
    int pods = 0;
    int failed = 0;
  };
  std::vector<Profile> byProfile;  // in first-seen order
};

struct RunMetrics {
  double allocationAt100 = 0;  // allocated GPUs, % of capacity, once arrived demand reached 100%
  double allocationAt130 = 0;
  double firstFailurePercent = -1;  // any GPU pod; -1: none failed
  std::vector<SizeMetrics> bySize;  // GPU pods by size, ascending
  std::vector<Fragmentation> fragmentation;
  MigMetrics mig;
};

// Allocation ratio (% of capacity) right after the pod whose arrival brought arrived demand to
// `percent` of capacity; the final ratio when the sequence ended earlier.
double allocationAt(const SimRun& run, int percent);

RunMetrics summarise(const SimRun& run, std::span<const SimPod> arrivals);

}  // namespace gte::sim
