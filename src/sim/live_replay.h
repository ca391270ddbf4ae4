#pragma once
// A what-if on a live cluster: pods placed one after another by the simulator's engine
// (placement_engine.h) with the extender's chooser, on a copy of the cluster's node states, and
// what each placement strands: the free all-NVLink sets (core/free_sets.h) of the chosen node
// before and after, and of the whole cluster. The states given are shared and immutable: the
// engine rebuilds its own copy of a node when a pod lands there, so nothing the caller holds
// changes. CPU and memory are not modelled (the extender does not watch them): every node has
// room for every pod, and only the extender's score ranks the nodes (ties drawn with a fixed
// seed, so the same state and pods give the same answer).
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "core/free_sets.h"
#include "core/node_state.h"
#include "core/pod_demand.h"
#include "policy/policy.h"
#include "sim/placement_engine.h"
#include "sim/sim_pod.h"

namespace gte::sim {

struct LiveNode {
  std::string_view name;
  // As published: the labels as read with the extender's charges (bound and reserved pods)
  // applied.
  NodeStateConstSharedPtr state;
};

struct ReplayPod {
  SimPod pod;        // its name and whole GPUs or MIG profile; CPU and memory are ignored
  PodDemand demand;  // under the replay's policy
};

struct ReplayStep {
  // `node` indexes the LiveNode span; -1: not placed (no node fits, or the pod asks for no GPUs).
  PodPlacement placement;
  // False for a pod without GPU or MIG requests: kube-scheduler places it without asking the
  // extender (managedResources), so the replay does not place it.
  bool asksForGpus = true;
  FreeSetCounts nodeBefore{};  // the chosen node's free sets before and after the pod
  FreeSetCounts nodeAfter{};
  FreeSetCounts clusterAfter{};  // every node's, summed, after the pod
};

struct LiveReplay {
  FreeSetCounts clusterBefore{};
  std::vector<ReplayStep> steps;  // one per pod replayed before keepGoing said stop
};

// `rebuild`: the states were built under another policy than `policy` (the what-if of a policy
// change): each is rebuilt under `policy` first, from the same labels and usage. `keepGoing` is
// asked before each pod; false stops the replay there (the deadline).
LiveReplay replayOnLiveStates(std::span<const LiveNode> nodes, std::span<const ReplayPod> pods,
                              const Policy& policy, bool rebuild,
                              const std::function<bool()>& keepGoing);

}  // namespace gte::sim
