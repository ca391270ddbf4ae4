#include "service/whatif_json.h"

#include <bit>

#include "json/json_writer.h"
#include "policy/link_class.h"
#include "policy/policy_hash.h"
#include "service/explain_json.h"
#include "service/nodes_json.h"

namespace gte {
namespace {

using json::JsonWriter;

// Why a pod of the run has no node: it asks for no GPUs; a group member: the planner's reason; a
// pod no node fits even now: filter's refusals; else the run's earlier pods took the room.
std::string unplacedReason(const sim::ReplayStep& step, std::size_t index,
                           const WhatifPolicyRun& run) {
  if (!step.asksForGpus) {
    return "asks for no GPUs: kube-scheduler places it without asking the extender";
  }
  if (run.group && step.placement.node < 0) return run.group->reason;
  if (index < run.noNodeFits.size() && !run.noNodeFits[index].empty()) {
    return "no node fits it: " + run.noNodeFits[index];
  }
  return "no node fits it now: the pods placed before it in this what-if took the room";
}

void writePlacement(JsonWriter& w, const sim::ReplayPod& pod, const sim::ReplayStep& step,
                    std::size_t index, const WhatifPolicyRun& run, const WhatifOutcome& outcome) {
  const sim::PodPlacement& p = step.placement;
  const bool placed = p.node >= 0;
  w.element().beginObject();
  w.key("pod").string(pod.pod.name).key("gpusRequested").integer(pod.demand.gpus);
  w.key("node");
  if (placed) {
    w.string(outcome.nodes[static_cast<std::size_t>(p.node)].name);
  } else {
    w.null();
  }
  // Who hands the GPUs out there: kube-scheduler's DRA allocator (its first-fit set) or the
  // device plugin.
  w.key("allocator");
  if (placed) {
    const NodeState& state = *outcome.nodes[static_cast<std::size_t>(p.node)].state;
    const bool dra = pod.demand.draClaims() || (pod.demand.gpus > 0 && pod.demand.mig.empty() &&
                                                state.allocator == GpuAllocator::kDra);
    w.string(dra ? "dra" : "device-plugin");
  } else {
    w.null();
  }
  w.key("gpus");
  writeGpuList(w, p.gpus);
  w.key("weakestLink");
  if (placed && std::popcount(p.gpus) > 1) {
    w.string(linkClassName(p.weakest));
  } else {
    w.null();
  }
  w.key("mig");
  if (placed && p.migGpu >= 0) {
    w.beginObject().key("gpu").integer(p.migGpu).key("start").integer(p.migStart).endObject();
  } else {
    w.null();
  }
  const auto orNull = [&w, placed](int value) {
    if (placed && value >= 0) {
      w.integer(value);
    } else {
      w.null();
    }
  };
  w.key("score");
  orNull(p.score);
  w.key("wireScore");
  orNull(p.wireScore);
  w.key("feasibleNodes").integer(p.feasibleNodes);
  w.key("tiedNodes").integer(placed ? p.tiedNodes : 0);
  w.key("strandedGpus").integer(placed ? p.strandedGpus : 0);
  w.key("nodeFreeSetsBefore");
  if (placed) {
    writeFreeSets(w, step.nodeBefore);
  } else {
    w.null();
  }
  w.key("nodeFreeSetsAfter");
  if (placed) {
    writeFreeSets(w, step.nodeAfter);
  } else {
    w.null();
  }
  w.key("clusterFreeSetsAfter");
  writeFreeSets(w, step.clusterAfter);
  w.key("reason").string(placed ? std::string() : unplacedReason(step, index, run));
  w.endObject();
}

// A group what-if's plan: its status, the level and domains it chose, why, and the verdict on
// every domain the planner looked at.
void writeGroupPlan(JsonWriter& w, const WhatifPolicyRun& run, const WhatifOutcome& outcome) {
  const GroupPlan& plan = *run.group;
  const GroupDomainNames* names = outcome.snapshot->groupDomains.get();
  w.beginObject().key("size").integer(outcome.groupSize.value_or(0));
  w.key("status").string(groupPlanStatusName(plan.status));
  w.key("levels");
  writeGroupLevels(w, run.levels);
  writePlanLevel(w, plan, run.levels, names);
  w.key("reason").string(plan.reason);
  w.key("verdicts");
  writeDomainVerdicts(w, &plan, run.levels, names);
  w.endObject();
}

void writeRun(JsonWriter& w, const WhatifPolicyRun& run, const WhatifOutcome& outcome) {
  w.element().beginObject();
  w.key("name").string(run.name).key("hash").string(policyHash(*run.policy));
  w.key("demand");
  if (run.demand) {
    writePodDemand(w, *run.demand);
  } else {
    w.null();
  }
  int placed = 0;
  for (const sim::ReplayStep& step : run.replay.steps) {
    placed += step.placement.node >= 0 ? 1 : 0;
  }
  w.key("placed").integer(placed);
  if (outcome.groupSize) {
    w.key("group");
    if (run.group) {
      writeGroupPlan(w, run, outcome);
    } else {
      w.null();
    }
  }
  w.key("clusterFreeSetsBefore");
  writeFreeSets(w, run.replay.clusterBefore);
  w.key("clusterFreeSetsAfter");
  writeFreeSets(w, run.replay.steps.empty() ? run.replay.clusterBefore
                                            : run.replay.steps.back().clusterAfter);
  w.key("placements").beginArray();
  for (std::size_t i = 0; i < run.replay.steps.size(); ++i) {
    writePlacement(w, outcome.pods[i], run.replay.steps[i], i, run, outcome);
  }
  w.endArray().endObject();
}

}  // namespace

std::string writeWhatif(const WhatifOutcome& outcome) {
  std::string out;
  JsonWriter w(out);
  w.beginObject();
  w.key("mode").string(outcome.groupSize ? "group" : outcome.csv ? "csv" : "pod");
  w.key("pods").integer(static_cast<std::int64_t>(outcome.pods.size()));
  w.key("nodes").integer(static_cast<std::int64_t>(outcome.nodes.size()));
  w.key("policies").beginArray();
  for (const WhatifPolicyRun& run : outcome.runs) {
    writeRun(w, run, outcome);
  }
  w.endArray().endObject();
  return out;
}

}  // namespace gte
