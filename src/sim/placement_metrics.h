#pragma once
// The placement-quality figures of one run: allocation ratio against arrived demand, the first
// failure overall and per request size, per size the share of pods that got an all-NVLink set and
// the share that *missed* (got a weaker link class than some feasible node offered at that
// moment), and the fragmentation measured during the run. For MIG pods: placed and failed, the
// failures where some GPU's slice counts covered the profile but no legal placement was free (the
// "slice counts merely add up" trap), and a MIG-naive chooser's invalid placements. For a groups
// simulation: per topology level the groups placed whole in one domain when one could hold them,
// split, or refused while the cluster had room, and the single pods' acceptance and link misses.
#include <array>
#include <span>
#include <string>
#include <vector>

#include "sim/group_simulator.h"
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

// Pod groups whose nodes' innermost topology level is one label (clique for GB200 NVL72 pools,
// block for HGX racks), over the measured arrivals (groups simulation).
struct LevelGroupMetrics {
  std::string level;  // the level's short name ("clique", "block"); "none" for no level
  int arrived = 0;
  int placed = 0;
  int fitOne = 0;           // some domain of the level could hold every member at arrival
  int wholeOfFitOne = 0;    // of those, placed inside one domain
  int whole = 0;            // placed inside one domain
  int split = 0;            // placed across two or more domains
  int refusedWithRoom = 0;  // refused although the group's nodes together could hold it
  int refusedFitOne = 0;    // refused although one domain could hold it
};

struct GroupMetrics {
  bool present = false;                    // a groups simulation (timed, with departures)
  std::vector<LevelGroupMetrics> byLevel;  // in first-seen order
  int multiGpuMembers = 0;                 // placed members with 2+ GPUs
  int membersNvlink = 0;                   // of those, on an all-NVLink set
  int membersMissed = 0;  // of those, on a weaker link class than a feasible node offered
  // Placed members by GPU count (index 2..8), and of those on an all-NVLink set: where DRA's
  // first-fit hands a member its set, what it got at 2 and 4 GPUs.
  std::array<int, 9> membersBySize{};
  std::array<int, 9> nvlinkBySize{};
  int planMismatches = 0;  // planned members whose GPUs differed from the plan's
  // GPU models: groups (every level) whose pool's nodes of some one model could hold every member
  // at arrival, of those the ones placed on one model, and placed groups on 2+ models.
  bool anyModel = false;  // some group selected no GPU product (its pool is every node)
  int fitOneModel = 0;
  int oneModelOfFit = 0;
  int groupsPlaced = 0;
  int mixedModels = 0;
  int singlePods = 0;  // single GPU pods that arrived
  int singlePodsFailed = 0;
  std::int64_t singleGpusAsked = 0;
  std::int64_t singleGpusPlaced = 0;
  double utilisation = 0;  // allocated GPUs, % of capacity, mean over the measured arrivals
};

struct RunMetrics {
  double allocationAt100 = 0;  // allocated GPUs, % of capacity, once arrived demand reached 100%
  double allocationAt130 = 0;
  double firstFailurePercent = -1;  // any GPU pod; -1: none failed
  std::vector<SizeMetrics> bySize;  // GPU pods by size, ascending
  std::vector<Fragmentation> fragmentation;
  MigMetrics mig;
  GroupMetrics groups;  // groups simulation only; the fields above but bySize are unused then
};

// Allocation ratio (% of capacity) right after the pod whose arrival brought arrived demand to
// `percent` of capacity; the final ratio when the sequence ended earlier.
double allocationAt(const SimRun& run, int percent);

RunMetrics summarise(const SimRun& run, std::span<const SimPod> arrivals);

// A groups simulation's figures over the arrivals from `measureFrom` on: per single-pod size the
// `bySize` counts (no first failures: the cluster is not filled once), and `groups`.
RunMetrics summariseGroups(const GroupRun& run, std::span<const TimedArrival> arrivals,
                           std::size_t measureFrom);

}  // namespace gte::sim
