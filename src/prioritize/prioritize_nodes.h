#pragma once
// One prioritize request: the 0..100 score of every candidate node and its 0..10 wire score over
// this request's candidates (wireScores: best link class first, min-max inside it). Pure: no I/O,
// clock, locks or globals.
#include <span>
#include <string_view>
#include <vector>

#include "core/node_candidate.h"
#include "core/placement_regret.h"
#include "core/pod_demand.h"
#include "core/score_node.h"
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
// and a candidate without a state score 0: filter has already rejected them.
// With `offer`, a pod of two or more whole GPUs also gets what placement regret compares with
// (core/placement_regret.h): the best set the fitting candidates offer and the worst set among
// those ranked top (left empty for other pods and when nothing fits). The names view `nodes`.
HostScores prioritizeNodes(const PodDemand* demand, std::span<const NodeCandidate> nodes,
                           const Policy& policy, PlacementOffer* offer = nullptr);

}  // namespace gte
