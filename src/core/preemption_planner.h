#pragma once
// Which pods to evict so that a GPU pod fits: topology-minimal preemption (docs/api.md#preempt).
// kube-scheduler's dry run picks victims by in-tree resources only (lowest priority first, GPU
// counts, not which GPUs); evicting them helps this pod only if the GPUs they free (with what is
// already free) form a set that satisfies it: its link requirement, NUMA demand, MIG profile or
// claims. The extender may answer other pods of the node instead (the protocol lets it change the
// victims, as long as they are on the node): among the GPU pods of lower priority than the
// preemptor, it takes the set that lets the pod fit with the lowest highest priority, then the
// fewest pods, then the lowest sum of priorities, then the least work destroyed (GPUs times the
// time each victim has run), and that frees at least the resources the
// scheduler's own GPU victims free (so its in-tree fit still holds). Pure: each "what if these
// pods were gone" is nodeStateWithout (core/node_charges.h) on the one published state of the
// node, judged by the per-node decision filter makes (NodeDecider).
#include <cstdint>
#include <string>
#include <vector>

#include "core/fit_outcome.h"
#include "core/node_state.h"
#include "core/pod_demand.h"
#include "model/resource_list.h"
#include "policy/policy.h"

namespace gte {

struct VictimInfo {
  std::string uid;
  bool holdsGpus = true;  // false: a pod without GPU requests (kept: in-tree fit may need it)
  // true: kube-scheduler's dry run proposed it; false: another pod of the node, of lower priority
  // than the preemptor, that the extender may evict instead.
  bool proposed = true;
  std::int64_t priority = 0;
  bool priorityKnown = false;  // a victim known only by UID, outside the cache: unknown
  ResourceList requests;       // what evicting it frees (empty: unknown, counts as nothing)
  // How long it has run, in seconds (0: unknown or just started): evicting it destroys that much
  // work on each of its GPUs.
  std::int64_t ranSeconds = 0;
};

struct VictimPlan {
  // The fit check on the node with every victim, proposed or not, gone. When the pod does not fit
  // even then, evicting cannot help it there: the node is dropped from the candidates, and this
  // says why.
  FitOutcome withAllGone;
  // The victims to evict, most important first; empty when the node is dropped.
  std::vector<std::string> victims;
  // How many what-ifs the search judged (each a node state rebuilt and a fit check), and whether
  // it ran out of its allowance and kept the scheduler's victims, minimised greedily.
  int trials = 0;
  bool searchCut = false;

  bool helps() const noexcept { return withAllGone.fits(); }
};

// The allowance of what-ifs per node: beyond it the scheduler's own victims are kept (minimised).
inline constexpr int kVictimSearchTrials = 512;

// The work evicting `victim` destroys: its devices (whole GPUs, replicas, MIG instances) times
// the seconds it has run (0 when unknown). Among victim sets alike in count and priorities, the
// one destroying the least is evicted (here and for a pod group's nodes,
// service/group_preemption.h).
double evictionWork(const VictimInfo& victim);

// Victims without GPUs that the scheduler proposed stay; among the GPU victims, proposed or not,
// the set described above. `state` is the node's published state, with the charges it was built
// with.
VictimPlan planVictims(const PodDemand& demand, const std::vector<VictimInfo>& victims,
                       const NodeState& state, const Policy& policy);

}  // namespace gte
