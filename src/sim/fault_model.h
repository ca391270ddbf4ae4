#pragma once
// Failing hardware for the groups simulation (docs/placement-quality.md#failing-hardware): a seeded
// list of faults on a cluster over a time horizon, and what each does to the nodes' labels-v1
// health marks over time.
// - Real faults: a GPU, or the NVLinks of one pair of GPUs that has NVLink, fails at `failAt`. A
//   precursor comes first (share 1 - `noPrecursorShare`): from `failAt - lead` the part is marked
//   degraded (`health` `d`, `nvlh` `d`), as the node agent marks a GPU or link whose error or
//   recovery rate rises. At `failAt` the GPU turns `0` (failed, never allocated) or the pair turns
//   `0` in `nvlh` with its `nvl` count dropped to 0 (down: PCIe from then on). After `repairTime`
//   the part is back, healthy.
// - False alarms: a part marked degraded at `markAt` that never fails; the mark clears after
//   `falseAlarmDuration`.
// Faults arrive as Poisson processes per part (rates per GPU and per NVLink pair per time unit),
// uniformly over [0, horizon). A part's faults may overlap; the marks then combine (failed over
// degraded over fine). Deterministic for a seed.
//
// Health-aware and health-blind runs see the same faults: failed GPUs and down links are in both
// (the device plugin reports unhealthy devices, and a link that is down is down), the degraded
// marks only in the aware run.
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "core/node_state.h"
#include "policy/policy.h"
#include "sim/group_workload.h"
#include "sim/placement_engine.h"
#include "sim/sim_pod.h"

namespace gte::sim {

// Defaults: an accelerated-failure experiment (docs/placement-quality.md#failing-hardware), time
// in the workload's units read as days (group runs average 2, single pods 3; the default groups
// run spans about 88). Meta's Llama 3 paper reports 419 unexpected interruptions in 54 days of
// pre-training on 16,384 H100 GPUs, 58.7% of them GPU issues: about 2.8e-4 GPU faults per
// GPU-day. The GPU rate is ten times that, so a run sees a few hundred faults. Links: no published
// per-pair rate (Llama 3 counts NVLink faults among GPU issues); the default makes an 8-GPU HGX
// node's pairs (28) fail about as often as its GPUs (8). Lead: five days
// (marin-community/marin#9086: a GB200 NVLink whose counter held 505 recovery events, named five
// days before it went down). False alarms: as many as real failures, marks lasting as long as a
// precursor. Repair: three days.
struct FaultModelOptions {
  double gpuFailRate = 0.0028;    // real GPU failures per GPU per time unit
  double linkFailRate = 0.0008;   // real failures per NVLink pair per time unit
  double lead = 5;                // precursor: marked degraded this long before failing
  double noPrecursorShare = 0;    // share of real failures with no precursor mark
  double falseAlarmRatio = 1;     // false alarms per real failure (same parts, same rates)
  double falseAlarmDuration = 5;  // a false alarm's mark clears after this long
  double repairTime = 3;          // a failed part is back (healthy) after this long
};

enum class FaultPart : std::uint8_t { kGpu, kLink };

struct FaultEvent {
  std::size_t node = 0;  // index into the cluster
  FaultPart part = FaultPart::kGpu;
  int gpu = 0;    // the GPU, or the pair's lower GPU
  int peer = -1;  // the pair's higher GPU; -1 for a GPU
  bool falseAlarm = false;
  double markAt = 0;  // the degraded mark appears (== failAt when there is no precursor)
  double failAt = std::numeric_limits<double>::infinity();  // never for a false alarm
  double clearAt = 0;  // a false alarm's mark clears, or the failed part is repaired
  bool precursor() const noexcept { return markAt < failAt; }
};

// Events sorted by the time of their first change (markAt), node, part.
std::vector<FaultEvent> generateFaults(std::span<const SimNodeSpec> cluster, double horizon,
                                       const FaultModelOptions& options, std::uint64_t seed);

// The time a workload's arrivals span (the last arrival's time); 0 when empty.
double workloadHorizon(std::span<const TimedArrival> arrivals);

// One change to a node's marks: an event's mark appears, its part fails, its mark clears, or its
// part is repaired.
enum class FaultStep : std::uint8_t { kMark, kFail, kClear, kRepair };
struct FaultChange {
  double at = 0;
  std::size_t event = 0;  // index into the events
  FaultStep step = FaultStep::kMark;
};

// Every change of the events, by time (ties: the events' order, then the step's).
std::vector<FaultChange> faultChanges(std::span<const FaultEvent> events);

// The marks the events put on the cluster's nodes as the changes are applied, and each node's
// labels-v1 state read from them (the template's labels with `health`, `nvlh` and `nvl` changed).
class FaultLabels {
 public:
  // `cluster`, `policy` and `events` must outlive this. `aware`: degraded marks are written;
  // otherwise only failed GPUs and down links.
  FaultLabels(std::span<const SimNodeSpec> cluster, const Policy& policy,
              std::span<const FaultEvent> events, bool aware);

  // Applies one change; returns the node whose labels changed.
  std::size_t apply(const FaultChange& change);

  // The node's labels as the marks now stand.
  NodeStateConstSharedPtr labels(std::size_t node) const;

  // GPUs of the node under a false alarm's mark now (a GPU marked, or an end of a marked pair).
  GpuMask falselyMarked(std::size_t node) const;

 private:
  struct Marks {
    std::vector<int> gpuDegraded, gpuFailed, falseGpu;  // per GPU: events holding it
    std::vector<int> pairDegraded, pairDown;            // per pair
  };
  void step(const FaultEvent& event, int degraded, int failed, int falseMark);

  std::span<const SimNodeSpec> cluster_;
  const Policy& policy_;
  std::span<const FaultEvent> events_;
  bool aware_ = false;
  std::vector<Marks> marks_;
};

// Whether a fault hits a placed arrival: the part fails during its run (after `at`, no later than
// `at + duration`) and is one of its GPUs, or a pair of GPUs it holds on one node (one member's
// or two members' on the same node).
bool faultHits(const FaultEvent& event, const TimedArrival& arrival,
               std::span<const PodPlacement> pods);

}  // namespace gte::sim
