#pragma once
// One prioritize request: the 0..100 score of every candidate node and its 0..10 wire score over
// this request's candidates (wireScores: best link class first, min-max inside it). Pure: no I/O,
// clock, locks or globals.
#include <span>
#include <string_view>
#include <vector>

#include "core/group_answers.h"
#include "core/node_candidate.h"
#include "core/pod_demand.h"
#include "core/scarce_sets.h"
#include "core/score_node.h"
#include "health/placement_regret.h"
#include "policy/policy.h"

namespace gte {

struct HostScore {
  std::string_view host;
  int score = 0;     // 0..100
  int wire = 0;      // 0..10, what kube-scheduler gets
  ScoreTerms terms;  // behind `score` (all -1 when the node does not fit); explain shows them
};
using HostScores = std::vector<HostScore>;

// One entry per candidate, in order. A null demand (the pod's request or annotations did not parse)
// and a candidate without a state score 0: filter has already rejected them. With `group` (a pod
// group member's answers, one per candidate), its held slots score 100 and 10 on the wire, the
// other nodes' wire scores are scaled into 0..8 below them, and refused nodes score 0.
// With `offer`, a pod of two or more whole GPUs also gets what placement regret compares with
// (health/placement_regret.h): the best set the fitting candidates offer and the worst set among
// those ranked top (left empty for other pods, when nothing fits, and for a group member whose
// group has a plan: the plan, not this ranking, places it). `scarce`: the nodes holding each size
// of free all-NVLink set, what breaking one costs a score (core/scarce_sets.h); null: counted over
// `nodes`. The names view `nodes`.
HostScores prioritizeNodes(const PodDemand* demand, std::span<const NodeCandidate> nodes,
                           const Policy& policy, const GroupAnswers* group = nullptr,
                           PlacementOffer* offer = nullptr, const ScarceSets* scarce = nullptr);

}  // namespace gte
