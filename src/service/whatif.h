#pragma once
// The what-if (docs/api.md, "What-if"): the request's pods placed one after another on a copy of
// the cluster snapshot, by the simulator's engine with the extender's chooser (sim/live_replay.h),
// or, for a group, placed all at once by the group planner (sim/live_group_plan.h), under the
// running policy and, when the request carries one, a proposed policy on another copy
// of the same snapshot. Read-only: the snapshot's states are shared and immutable, and nothing
// here reserves, binds or publishes. Pure apart from `keepGoing`, which the caller ties to the
// deadline.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/pod_demand.h"
#include "group/group_plan.h"
#include "group/pod_group.h"
#include "policy/policy.h"
#include "service/whatif_request.h"
#include "sim/live_replay.h"
#include "snapshot/cluster_snapshot.h"

namespace gte {

struct WhatifPolicyRun {
  std::string name;  // "running" or "proposed"
  PolicyConstSharedPtr policy;
  std::optional<PodDemand> demand;  // the pod's demand under this policy; none for a CSV
  sim::LiveReplay replay;
  // A group what-if (WhatifRequest::groupSize): the planner's answer (its domain, reason and
  // verdicts; replay.steps are its members) and the levels it planned by.
  std::optional<GroupPlan> group;
  std::vector<GroupLevel> levels;
  std::optional<GroupLevelMode> sameModel;  // the pod's one-GPU-model mode; nullopt: the policy's
  // Per step of the replay: why no node fits that pod even on the cluster as it is now, from the
  // per-node decision filter makes: its distinct refusals, most nodes first ("MIG profile 9g.99gb
  // is not offered by this GPU model (3 nodes)"); empty for a placed pod, and for one some node
  // fits now (an earlier pod of the run took the room).
  std::vector<std::string> noNodeFits;
};

struct WhatifOutcome {
  bool csv = false;
  std::optional<std::int64_t> groupSize;   // a group what-if: its members
  std::vector<sim::ReplayPod> pods;        // under the running policy (names and requests)
  ClusterSnapshotConstSharedPtr snapshot;  // keeps `nodes` alive
  std::vector<sim::LiveNode> nodes;        // by name; placements index them
  std::vector<WhatifPolicyRun> runs;       // the running policy first
  bool stopped = false;  // keepGoing said stop before every pod of every run was placed
};

// Errors (kInvalidArgument): the pod asks for no GPU or MIG devices, its annotations (group
// annotations included, read with the owners' `sizes`, may be null) are invalid,
// the proposed policy does not parse or changes how labels are read (labelPrefix, MIG products:
// the snapshot's states were read under the running policy; for a group, the labels of its
// levels: the snapshot's domains were read under the running levels).
Result<WhatifOutcome> runWhatif(const WhatifRequest& request,
                                ClusterSnapshotConstSharedPtr snapshot,
                                const std::function<bool()>& keepGoing,
                                const GroupSizeLookup* sizes = nullptr);

}  // namespace gte
