#include "sim/fault_model.h"

#include <algorithm>
#include <random>
#include <string>
#include <tuple>

#include "sim/node_template.h"
#include "topology/gpu_topology.h"

namespace gte::sim {
namespace {

struct PartRef {
  std::size_t node = 0;
  int gpu = 0;
  int peer = -1;
};

// A Poisson number of faults (mean rate x parts x horizon) on parts drawn uniformly, at times
// uniform over [0, horizon).
void drawFaults(std::span<const PartRef> parts, double rate, double horizon, bool falseAlarm,
                const FaultModelOptions& options, std::mt19937_64& rng,
                std::vector<FaultEvent>& out) {
  if (parts.empty() || rate <= 0 || horizon <= 0) {
    return;
  }
  std::poisson_distribution<int> count(rate * static_cast<double>(parts.size()) * horizon);
  std::uniform_int_distribution<std::size_t> which(0, parts.size() - 1);
  std::uniform_real_distribution<double> when(0, horizon);
  std::uniform_real_distribution<double> unit(0, 1);
  const int n = count(rng);
  for (int k = 0; k < n; ++k) {
    const PartRef& part = parts[which(rng)];
    FaultEvent event;
    event.node = part.node;
    event.part = part.peer < 0 ? FaultPart::kGpu : FaultPart::kLink;
    event.gpu = part.gpu;
    event.peer = part.peer;
    event.falseAlarm = falseAlarm;
    const double at = when(rng);
    const bool precursor = unit(rng) >= options.noPrecursorShare;
    if (falseAlarm) {
      event.markAt = at;
      event.clearAt = at + options.falseAlarmDuration;
    } else {
      event.failAt = at;
      event.markAt = precursor ? at - options.lead : at;
      event.clearAt = at + options.repairTime;
    }
    out.push_back(event);
  }
}

int stepOrder(FaultStep step) {
  return static_cast<int>(step);
}

}  // namespace

std::vector<FaultEvent> generateFaults(std::span<const SimNodeSpec> cluster, double horizon,
                                       const FaultModelOptions& options, std::uint64_t seed) {
  std::vector<PartRef> gpus;
  std::vector<PartRef> links;
  for (std::size_t node = 0; node < cluster.size(); ++node) {
    const NodeTemplate& machine = *cluster[node].machine;
    for (int i = 0; i < machine.gpus; ++i) {
      gpus.push_back(PartRef{node, i, -1});
      for (int j = i + 1; j < machine.gpus; ++j) {
        const auto at = static_cast<std::size_t>(pairIndex(i, j, machine.gpus));
        if (at < machine.nvl.size() && machine.nvl[at] != '0') {
          links.push_back(PartRef{node, i, j});
        }
      }
    }
  }
  std::mt19937_64 rng(seed ^ 0x6a09e667f3bcc909ULL);
  std::vector<FaultEvent> events;
  drawFaults(gpus, options.gpuFailRate, horizon, false, options, rng, events);
  drawFaults(links, options.linkFailRate, horizon, false, options, rng, events);
  drawFaults(gpus, options.gpuFailRate * options.falseAlarmRatio, horizon, true, options, rng,
             events);
  drawFaults(links, options.linkFailRate * options.falseAlarmRatio, horizon, true, options, rng,
             events);
  std::stable_sort(events.begin(), events.end(), [](const FaultEvent& a, const FaultEvent& b) {
    return std::tie(a.markAt, a.node, a.gpu, a.peer) < std::tie(b.markAt, b.node, b.gpu, b.peer);
  });
  return events;
}

double workloadHorizon(std::span<const TimedArrival> arrivals) {
  return arrivals.empty() ? 0 : arrivals.back().at;
}

std::vector<FaultChange> faultChanges(std::span<const FaultEvent> events) {
  std::vector<FaultChange> changes;
  for (std::size_t e = 0; e < events.size(); ++e) {
    const FaultEvent& event = events[e];
    if (event.falseAlarm) {
      changes.push_back(FaultChange{event.markAt, e, FaultStep::kMark});
      changes.push_back(FaultChange{event.clearAt, e, FaultStep::kClear});
      continue;
    }
    if (event.precursor()) {
      changes.push_back(FaultChange{event.markAt, e, FaultStep::kMark});
    }
    changes.push_back(FaultChange{event.failAt, e, FaultStep::kFail});
    changes.push_back(FaultChange{event.clearAt, e, FaultStep::kRepair});
  }
  std::stable_sort(changes.begin(), changes.end(), [](const FaultChange& a, const FaultChange& b) {
    return std::make_tuple(a.at, a.event, stepOrder(a.step)) <
           std::make_tuple(b.at, b.event, stepOrder(b.step));
  });
  return changes;
}

FaultLabels::FaultLabels(std::span<const SimNodeSpec> cluster, const Policy& policy,
                         std::span<const FaultEvent> events, bool aware)
    : cluster_(cluster), policy_(policy), events_(events), aware_(aware), marks_(cluster.size()) {
  for (std::size_t node = 0; node < cluster.size(); ++node) {
    const int gpus = cluster[node].machine->gpus;
    Marks& marks = marks_[node];
    marks.gpuDegraded.assign(static_cast<std::size_t>(gpus), 0);
    marks.gpuFailed.assign(static_cast<std::size_t>(gpus), 0);
    marks.falseGpu.assign(static_cast<std::size_t>(gpus), 0);
    marks.pairDegraded.assign(static_cast<std::size_t>(pairCount(gpus)), 0);
    marks.pairDown.assign(static_cast<std::size_t>(pairCount(gpus)), 0);
  }
}

void FaultLabels::step(const FaultEvent& event, int degraded, int failed, int falseMark) {
  Marks& marks = marks_[event.node];
  const auto gpu = static_cast<std::size_t>(event.gpu);
  if (event.part == FaultPart::kGpu) {
    marks.gpuDegraded[gpu] += degraded;
    marks.gpuFailed[gpu] += failed;
    marks.falseGpu[gpu] += falseMark;
    return;
  }
  const auto pair = static_cast<std::size_t>(
      pairIndex(event.gpu, event.peer, cluster_[event.node].machine->gpus));
  marks.pairDegraded[pair] += degraded;
  marks.pairDown[pair] += failed;
  marks.falseGpu[gpu] += falseMark;
  marks.falseGpu[static_cast<std::size_t>(event.peer)] += falseMark;
}

std::size_t FaultLabels::apply(const FaultChange& change) {
  const FaultEvent& event = events_[change.event];
  const int falseMark = event.falseAlarm ? 1 : 0;
  switch (change.step) {
    case FaultStep::kMark:
      step(event, 1, 0, falseMark);
      break;
    case FaultStep::kClear:
      step(event, -1, 0, -falseMark);
      break;
    case FaultStep::kFail:
      step(event, event.precursor() ? -1 : 0, 1, 0);
      break;
    case FaultStep::kRepair:
      step(event, 0, -1, 0);
      break;
  }
  return event.node;
}

NodeStateConstSharedPtr FaultLabels::labels(std::size_t node) const {
  const NodeTemplate& machine = *cluster_[node].machine;
  NodeInfo info = makeTemplateNode(machine, machine.name, policy_.labelPrefix);
  const Marks& marks = marks_[node];
  std::string& health = info.labels[policy_.labelPrefix + "health"];
  for (std::size_t gpu = 0; gpu < marks.gpuFailed.size(); ++gpu) {
    if (marks.gpuFailed[gpu] > 0) {
      health[gpu] = '0';
    } else if (aware_ && marks.gpuDegraded[gpu] > 0) {
      health[gpu] = 'd';
    }
  }
  std::string nvlh(marks.pairDown.size(), '1');
  bool marked = false;
  std::string& nvl = info.labels[policy_.labelPrefix + "nvl"];
  for (std::size_t pair = 0; pair < nvlh.size(); ++pair) {
    if (marks.pairDown[pair] > 0) {
      nvlh[pair] = '0';
      nvl[pair] = '0';
      marked = true;
    } else if (aware_ && marks.pairDegraded[pair] > 0) {
      nvlh[pair] = 'd';
      marked = true;
    }
  }
  if (marked) {
    info.labels[policy_.labelPrefix + "nvlh"] = nvlh;
  }
  return readNodeState(info, policy_);
}

GpuMask FaultLabels::falselyMarked(std::size_t node) const {
  GpuMask mask = 0;
  const Marks& marks = marks_[node];
  for (std::size_t gpu = 0; gpu < marks.falseGpu.size(); ++gpu) {
    mask |= marks.falseGpu[gpu] > 0 ? GpuMask{1} << gpu : 0;
  }
  return mask;
}

bool faultHits(const FaultEvent& event, const TimedArrival& arrival,
               std::span<const PodPlacement> pods) {
  if (event.falseAlarm || !(event.failAt > arrival.at) ||
      event.failAt > arrival.at + arrival.duration) {
    return false;
  }
  GpuMask held = 0;
  for (const PodPlacement& pod : pods) {
    held |= pod.node >= 0 && static_cast<std::size_t>(pod.node) == event.node ? pod.gpus : 0;
  }
  GpuMask part = GpuMask{1} << event.gpu;
  part |= event.peer >= 0 ? GpuMask{1} << event.peer : 0;
  return (held & part) == part;
}

}  // namespace gte::sim
