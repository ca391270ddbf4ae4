// Failing hardware (fault_model.h): the generator is seeded and keeps its rates, precursor marks
// appear `lead` before the failure and only on the health-aware run's labels, a fault hits a pod
// only when its part fails during the pod's run, and on a short run the health-aware extender is
// hit less often than the health-blind one (which it would not be if the marks were ignored).
#include <catch2/catch_test_macros.hpp>
#include <cmath>
#include <limits>

#include "policy/default_policy.h"
#include "sim/cluster_spec.h"
#include "sim/fault_model.h"
#include "sim/fault_report.h"
#include "sim/group_simulator.h"
#include "sim/group_workload.h"
#include "topology/gpu_topology.h"

using namespace gte;
using namespace gte::sim;

namespace {

bool sameEvents(const std::vector<FaultEvent>& a, const std::vector<FaultEvent>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].node != b[i].node || a[i].gpu != b[i].gpu || a[i].peer != b[i].peer ||
        a[i].falseAlarm != b[i].falseAlarm || a[i].markAt != b[i].markAt ||
        a[i].failAt != b[i].failAt || a[i].clearAt != b[i].clearAt) {
      return false;
    }
  }
  return true;
}

TimedArrival pod(double at, double duration, int gpus) {
  TimedArrival arrival;
  arrival.at = at;
  arrival.duration = duration;
  arrival.pod = SimPod{"p", 4000 * gpus, 16384 * gpus, gpus};
  return arrival;
}

PodPlacement on(int node, GpuMask gpus) {
  PodPlacement placement;
  placement.node = node;
  placement.gpus = gpus;
  return placement;
}

}  // namespace

TEST_CASE("fault generator: the same seed gives the same faults, rates roughly kept") {
  const auto nodes = *parseClusterSpec("gb200:144/18,dgx1v:16");
  FaultModelOptions options;
  options.gpuFailRate = 0.01;
  options.linkFailRate = 0.005;
  options.lead = 4;
  options.falseAlarmRatio = 0.5;
  const double horizon = 100;
  const std::vector<FaultEvent> first = generateFaults(nodes, horizon, options, 7);
  CHECK(sameEvents(first, generateFaults(nodes, horizon, options, 7)));
  CHECK_FALSE(sameEvents(first, generateFaults(nodes, horizon, options, 8)));

  // 576 + 128 GPUs; NVLink pairs: 6 per GB200 tray, 16 of a DGX-1V's 28.
  const double gpus = 576 + 128;
  const double pairs = 144 * 6 + 16 * 16;
  int gpuFailures = 0;
  int linkFailures = 0;
  int falseAlarms = 0;
  for (const FaultEvent& event : first) {
    const NodeTemplate& machine = *nodes[event.node].machine;
    if (event.part == FaultPart::kLink) {
      REQUIRE(event.peer > event.gpu);
      REQUIRE(event.peer < machine.gpus);
      // Only pairs that have NVLink fail as links.
      CHECK(machine.nvl[static_cast<std::size_t>(pairIndex(event.gpu, event.peer, machine.gpus))] !=
            '0');
    }
    if (event.falseAlarm) {
      ++falseAlarms;
      CHECK(std::isinf(event.failAt));
      CHECK(event.clearAt == event.markAt + options.falseAlarmDuration);
      continue;
    }
    (event.part == FaultPart::kGpu ? gpuFailures : linkFailures) += 1;
    CHECK(event.failAt >= 0);
    CHECK(event.failAt < horizon);
    CHECK(event.markAt == event.failAt - options.lead);
    CHECK(event.clearAt == event.failAt + options.repairTime);
  }
  const auto near = [](int count, double expected) {
    return std::abs(count - expected) < 0.15 * expected;
  };
  CHECK(near(gpuFailures, gpus * horizon * options.gpuFailRate));
  CHECK(near(linkFailures, pairs * horizon * options.linkFailRate));
  CHECK(near(falseAlarms,
             0.5 * (gpus * options.gpuFailRate + pairs * options.linkFailRate) * horizon));

  // Without precursors every real failure is marked only when it fails.
  options.noPrecursorShare = 1;
  for (const FaultEvent& event : generateFaults(nodes, horizon, options, 7)) {
    CHECK((event.falseAlarm || event.markAt == event.failAt));
  }
}

TEST_CASE("fault labels: the precursor mark comes lead before the failure, aware runs only") {
  const auto nodes = *parseClusterSpec("gb200:2/2");
  const Policy policy = defaultPolicy();
  std::vector<FaultEvent> events(2);
  events[0].node = 1;  // the NVLinks between GPUs 0 and 2 of the second tray
  events[0].part = FaultPart::kLink;
  events[0].gpu = 0;
  events[0].peer = 2;
  events[0].markAt = 5;
  events[0].failAt = 10;
  events[0].clearAt = 13;
  events[1].node = 1;  // GPU 3, marked from 6, failing at 11, repaired at 14
  events[1].gpu = 3;
  events[1].markAt = 6;
  events[1].failAt = 11;
  events[1].clearAt = 14;
  const std::vector<FaultChange> changes = faultChanges(events);
  REQUIRE(changes.size() == 6);
  CHECK(changes[0].at == 5);
  CHECK(changes[0].step == FaultStep::kMark);
  CHECK(changes[2].at == 10);
  CHECK(changes[2].step == FaultStep::kFail);

  FaultLabels aware(nodes, policy, events, true);
  FaultLabels blind(nodes, policy, events, false);
  const auto at = [&](FaultLabels& labels, double time) {
    for (const FaultChange& change : changes) {
      if (change.at <= time) {
        CHECK(labels.apply(change) == 1);
      }
    }
    return labels.labels(1);
  };
  // Before any change: both as the template.
  CHECK(aware.labels(1)->topology.linkHealthOf(0, 2) == LinkHealth::kOk);
  // At 7: the link and GPU 3 are marked degraded in the aware labels only.
  FaultLabels awareAt7(nodes, policy, events, true);
  FaultLabels blindAt7(nodes, policy, events, false);
  const NodeStateConstSharedPtr a7 = at(awareAt7, 7);
  const NodeStateConstSharedPtr b7 = at(blindAt7, 7);
  CHECK(a7->topology.linkHealthOf(0, 2) == LinkHealth::kDegraded);
  CHECK(a7->gpuHealth(3) == GpuHealth::kDegraded);
  CHECK(b7->topology.linkHealthOf(0, 2) == LinkHealth::kOk);
  CHECK(b7->gpuHealth(3) == GpuHealth::kHealthy);
  CHECK(a7->topology.nvlinkCount(0, 2) > 0);
  CHECK(rebuildNodeState(*a7, NodeUsage{}, policy)->usableCount == 4);
  // At 12: the link is down (no NVLink) and GPU 3 failed, in both.
  const NodeStateConstSharedPtr a12 = at(aware, 12);
  const NodeStateConstSharedPtr b12 = at(blind, 12);
  for (const NodeStateConstSharedPtr& state : {a12, b12}) {
    CHECK(state->topology.linkHealthOf(0, 2) == LinkHealth::kDown);
    CHECK(state->topology.nvlinkCount(0, 2) == 0);
    CHECK(state->topology.health[3] == GpuHealth::kUnhealthy);
    CHECK(rebuildNodeState(*state, NodeUsage{}, policy)->usableCount == 3);
    CHECK(state->topology.linkHealthOf(0, 1) == LinkHealth::kOk);
  }
  // At 14: both repaired.
  FaultLabels repaired(nodes, policy, events, true);
  const NodeStateConstSharedPtr r14 = at(repaired, 14);
  CHECK(r14->topology.linkHealthOf(0, 2) == LinkHealth::kOk);
  CHECK(r14->topology.nvlinkCount(0, 2) > 0);
  CHECK(rebuildNodeState(*r14, NodeUsage{}, policy)->usableCount == 4);
  CHECK(r14->topology.health[3] == GpuHealth::kHealthy);
  // The other tray never changes.
  CHECK(aware.labels(0)->topology.linkHealth.empty());

  // A false alarm marks its GPUs (falselyMarked) until it clears.
  std::vector<FaultEvent> alarm(1);
  alarm[0].node = 0;
  alarm[0].part = FaultPart::kLink;
  alarm[0].gpu = 1;
  alarm[0].peer = 3;
  alarm[0].falseAlarm = true;
  alarm[0].markAt = 2;
  alarm[0].clearAt = 4;
  const std::vector<FaultChange> alarmChanges = faultChanges(alarm);
  REQUIRE(alarmChanges.size() == 2);
  FaultLabels marks(nodes, policy, alarm, true);
  marks.apply(alarmChanges[0]);
  CHECK(marks.falselyMarked(0) == 0b1010);
  CHECK(marks.labels(0)->topology.linkHealthOf(1, 3) == LinkHealth::kDegraded);
  marks.apply(alarmChanges[1]);
  CHECK(marks.falselyMarked(0) == 0);
  CHECK(marks.labels(0)->topology.linkHealthOf(1, 3) == LinkHealth::kOk);
}

TEST_CASE("a fault hits a pod whose GPU or pair fails during its run, not one that ended") {
  FaultEvent link;
  link.node = 2;
  link.part = FaultPart::kLink;
  link.gpu = 0;
  link.peer = 1;
  link.failAt = 5;
  const std::vector<PodPlacement> pair = {on(2, 0b0011)};
  CHECK(faultHits(link, pod(1, 10, 2), pair));        // running at 5
  CHECK_FALSE(faultHits(link, pod(1, 3, 2), pair));   // ended at 4
  CHECK_FALSE(faultHits(link, pod(6, 10, 2), pair));  // placed after the failure
  CHECK_FALSE(faultHits(link, pod(1, 10, 2), std::vector<PodPlacement>{on(1, 0b0011)}));
  CHECK_FALSE(faultHits(link, pod(1, 10, 2), std::vector<PodPlacement>{on(2, 0b0110)}));
  // Two members on one node holding the pair's ends between them.
  TimedArrival group = pod(1, 10, 1);
  group.members = 2;
  CHECK(faultHits(link, group, std::vector<PodPlacement>{on(2, 0b0001), on(2, 0b0010)}));
  CHECK_FALSE(faultHits(link, group, std::vector<PodPlacement>{on(2, 0b0001), on(3, 0b0010)}));

  FaultEvent gpu;
  gpu.node = 2;
  gpu.gpu = 1;
  gpu.failAt = 5;
  CHECK(faultHits(gpu, pod(1, 10, 2), std::vector<PodPlacement>{on(2, 0b0110)}));
  CHECK_FALSE(faultHits(gpu, pod(1, 10, 2), std::vector<PodPlacement>{on(2, 0b1100)}));
  // A false alarm hits nothing.
  FaultEvent alarm = gpu;
  alarm.falseAlarm = true;
  alarm.failAt = std::numeric_limits<double>::infinity();
  CHECK_FALSE(faultHits(alarm, pod(1, 10, 2), std::vector<PodPlacement>{on(2, 0b0110)}));
}

TEST_CASE("faults run: the health-aware extender is hit less than the health-blind one") {
  const auto nodes = *parseClusterSpec("hgx-h100:16/4,gb200:36/18");
  GroupWorkloadSpec spec;
  spec.singleGpus = *parseWeightedValues("1:40,2:30,4:30", 0, 8, "gpus");
  spec.groupSizes = *parseWeightedValues("2:1,4:1", 2, 18, "members");
  spec.pools = defaultGroupPools(nodes);
  spec.groupShare = 0.1;
  spec.load = 0.7;
  spec.arrivals = 1500;
  FaultModelOptions faults;
  faults.gpuFailRate = 0.004;
  faults.linkFailRate = 0.002;
  int blindHits = 0;
  int awareHits = 0;
  int placedBlind = 0;
  int placedAware = 0;
  for (const std::uint64_t seed : {42, 43}) {
    const std::vector<TimedArrival> arrivals = groupWorkload(spec, 128 + 144, seed);
    const std::vector<FaultEvent> events =
        generateFaults(nodes, workloadHorizon(arrivals), faults, seed);
    GroupSimOptions options;
    options.groups = GroupMode::kPerPod;
    options.pods.chooser = Chooser::kExtender;
    options.pods.inTree = InTree::kMostAllocated;
    options.pods.seed = seed;
    options.faults = events;
    for (const bool aware : {false, true}) {
      options.healthAware = aware;
      const GroupRun run = simulateGroups(nodes, arrivals, defaultPolicy(), options);
      const FaultRunSummary summary = summariseFaultRun(run, arrivals, events, 0);
      (aware ? awareHits : blindHits) += summary.multiGpuPodsHit;
      (aware ? placedAware : placedBlind) += summary.multiGpuPods;
      CHECK(summary.gpuFailures > 0);
      CHECK(summary.linkFailures > 0);
      CHECK(summary.falseAlarms > 0);
    }
  }
  INFO("blind " << blindHits << "/" << placedBlind << ", aware " << awareHits << "/"
                << placedAware);
  // Pods of 2 and 4 GPUs find unmarked sets elsewhere: the marks keep most of them off the parts
  // that fail (about a fifth of the blind run's hits remain on these seeds).
  CHECK(blindHits >= 40);
  CHECK(awareHits * 3 < blindHits);
}

TEST_CASE("faults run: free GPU-time under a false alarm's mark is clocked") {
  const auto nodes = *parseClusterSpec("gb200:1/1");
  // Pods without GPUs at 0 and 10: the run measures from 0 to 10.
  std::vector<TimedArrival> arrivals = {pod(0, 1, 0), pod(10, 1, 0)};
  arrivals[0].pod.cpuMilli = arrivals[1].pod.cpuMilli = 100;
  std::vector<FaultEvent> events(2);
  events[0].part = FaultPart::kLink;  // GPUs 0 and 1, from 2 to 6
  events[0].gpu = 0;
  events[0].peer = 1;
  events[0].falseAlarm = true;
  events[0].markAt = 2;
  events[0].clearAt = 6;
  events[1].gpu = 1;  // GPU 1 again, from 5 to 8
  events[1].falseAlarm = true;
  events[1].markAt = 5;
  events[1].clearAt = 8;
  GroupSimOptions options;
  options.pods.chooser = Chooser::kExtender;
  options.faults = events;
  for (const bool aware : {false, true}) {
    options.healthAware = aware;
    const GroupRun run = simulateGroups(nodes, arrivals, defaultPolicy(), options);
    CHECK(run.measuredSpan == 10);
    // GPUs 0 and 1 for 4, GPU 1 for 2 more: the marks are clocked whether the labels show them
    // or not (the blind run is the baseline the withheld time is measured against).
    CHECK(run.falselyMarkedIdle == 10);
  }
}
