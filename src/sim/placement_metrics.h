#pragma once
// The placement-quality figures of one run: allocation ratio against arrived demand, the first
// failure overall and per request size, per size the share of pods that got an all-NVLink set and
// the share that *missed* (got a weaker link class than some feasible node offered at that
// moment), and the fragmentation measured during the run.
#include <span>
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
};

struct RunMetrics {
  double allocationAt100 = 0;  // allocated GPUs, % of capacity, once arrived demand reached 100%
  double allocationAt130 = 0;
  double firstFailurePercent = -1;  // any GPU pod; -1: none failed
  std::vector<SizeMetrics> bySize;  // GPU pods by size, ascending
  std::vector<Fragmentation> fragmentation;
};

// Allocation ratio (% of capacity) right after the pod whose arrival brought arrived demand to
// `percent` of capacity; the final ratio when the sequence ended earlier.
double allocationAt(const SimRun& run, int percent);

RunMetrics summarise(const SimRun& run, std::span<const SimPod> arrivals);

}  // namespace gte::sim
