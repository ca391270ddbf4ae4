#pragma once
// One prioritize request: the 0..100 score of every candidate node and its 0..10 wire score over
// this request's candidates (wireScores: best link class first, min-max inside it). Pure: no I/O,
// clock, locks or globals.
#include <span>
#include <string_view>
#include <vector>

#include "core/node_candidate.h"
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
HostScores prioritizeNodes(const PodDemand* demand, std::span<const NodeCandidate> nodes,
                           const Policy& policy);

}  // namespace gte
