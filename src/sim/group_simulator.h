#pragma once
// Replays a timed workload of single pods and pod groups (group_workload.h) on a simulated cluster
// with racks (cluster_spec.h, rack_labels.h), with departures: an arrival is placed at its time or
// refused (it is not queued), and a placed pod or group leaves after its duration, giving its GPUs,
// CPU and memory back. Single pods go through the engine (placement_engine.h) with the run's pod
// chooser. A group's members all arrive at once, as a gang: either every member is placed or none
// is (members already placed are rolled back). How the members are placed:
// - per pod: one after another by the pod chooser, nothing knowing they belong together (the
//   extender today, or kube-scheduler's default);
// - label-level best fit, like Kueue's topology-aware scheduling: the domain is chosen by counts
//   alone (the innermost level the group's nodes carry whose some domain holds the group, by how
//   many members fit each node's free GPUs, CPU and memory; least free GPUs left over, then name),
//   a required level with no fitting domain refuses the group, a preferred one passes to the next
//   level and, past the last, to the fewest domains (largest first); the members then go one by
//   one by the pod chooser inside the chosen domain (GPU-blind inside the node with the default
//   scheduler: the device plugin's pick);
// - planned: the extender's group planner (group/group_plan.h) over the group's nodes that have
//   room for a member's CPU and memory (what kube-scheduler's own filters pass), with the nodes'
//   states, slot facts and domain ids as the snapshot gives them; each member lands on its planned
//   node (the engine confirms the fit and takes the device plugin's pick, which the plan
//   predicted). A plan that refuses the group refuses it; a group the planner leaves to be placed
//   pod by pod is placed per pod by the pod chooser.
// Levels are the policy's `groups.levels` (modes included) unless the options give others. At
// every group arrival the run notes what the cluster offered (the oracle the targets are judged
// by): whether some single domain of the group's innermost level, and whether all of the group's
// nodes together, could hold every member by those counts. Deterministic for a seed.
// DRA mode (`options.pods.draOrder`, placement_engine.h): every node hands nvidia.com/gpu out
// through DRA, so inside a node each pod, single or member, gets the first-fit set of the
// scheduler's DRA allocator, the planner counts each node's slots on that first-fit chain
// (docs/groups.md, "DRA nodes"), and a pod that ends releases its claim. Members ask through
// nvidia.com/gpu, or with `options.pods.draPods` kClaimTemplate, members and pods of 2+ GPUs
// through the claim-template tiers: the planner then plans the members by their claims (the
// first-fit of the tiers, member after member on each node).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "group/group_plan.h"
#include "policy/group_levels.h"
#include "policy/policy.h"
#include "sim/fault_model.h"
#include "sim/group_workload.h"
#include "sim/placement_engine.h"
#include "sim/topology_domains.h"

namespace gte::sim {

enum class GroupMode : std::uint8_t {
  kPerPod,      // members one by one by the pod chooser
  kTasBestFit,  // domain by counts (Kueue TAS-like best fit), members by the pod chooser inside
  kPlanned,     // the extender's group planner
};

struct GroupSimOptions {
  SimOptions pods;  // how every pod is chosen: single pods, and members placed per pod
  GroupMode groups = GroupMode::kPerPod;
  std::vector<GroupLevel> levels;  // empty: the policy's groups.levels
  std::size_t measureFrom = 0;     // arrivals before this index warm the cluster up (not sampled)
  // Failing hardware (fault_model.h; not with DRA): the faults the nodes' labels go through as the
  // run's time passes, with the degraded marks (health-aware) or without them (health-blind: only
  // failed GPUs and down links). Pods already running stay where they are. Empty: no faults.
  std::span<const FaultEvent> faults;
  bool healthAware = true;
};

struct ArrivalOutcome {
  bool placed = false;
  // Where each pod went: the single pod, or every member in order (when the group was placed);
  // a refused single pod keeps its failed placement (node -1).
  std::vector<PodPlacement> pods;
  // Groups only, at arrival:
  int level = -1;              // the innermost level the group's nodes carry; -1: none
  int domainsUsed = 0;         // distinct domains of `level` among the members' nodes
  bool fitsOneDomain = false;  // some domain of `level` could hold every member (counts)
  bool fitsTotal = false;      // the group's nodes together could (counts)
  int largestDomainSlots = 0;  // members the roomiest domain of `level` could take
  // GPU models (labels-v1 `model`): whether the admitted nodes of some one model could hold every
  // member (counts), and how many models the placed members' nodes carry.
  bool fitsOneModel = false;
  int modelsUsed = 0;
  // Planned mode: what the planner answered, and members whose GPUs differed from the plan's.
  GroupPlanStatus plan = GroupPlanStatus::kUnplaced;
  int planMismatches = 0;
};

struct GroupRun {
  std::int64_t capacityGpus = 0;
  std::vector<GroupLevel> levels;        // what ArrivalOutcome::level indexes
  std::vector<ArrivalOutcome> outcomes;  // one per arrival
  // Allocated GPUs, % of capacity, averaged over the measured arrivals (sampled as each arrives).
  double utilisation = 0;
  // With faults: GPU-time that GPUs under a false alarm's mark sat free, from the first measured
  // arrival to the last arrival (`measuredSpan` long).
  double falselyMarkedIdle = 0;
  double measuredSpan = 0;
};

GroupRun simulateGroups(std::span<const SimNodeSpec> cluster,
                        std::span<const TimedArrival> arrivals, const Policy& policy,
                        const GroupSimOptions& options);

}  // namespace gte::sim
