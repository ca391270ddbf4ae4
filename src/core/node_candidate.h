#pragma once
// One node a request asks about, resolved to its state: from the request's own Node object
// (full-Node mode) or from the cluster snapshot (NodeNames mode). The per-request loops in
// src/filter and src/prioritize take a list of these and decide each through NodeDecider
// (core/node_decider.h).
#include <string_view>

#include "core/node_state.h"
#include "core/plain_answers.h"

namespace gte {

struct NodeCandidate {
  std::string_view name;
  const NodeState* state = nullptr;  // null: the node could not be resolved, `missing` says why
  std::string_view missing;
  // The state's precomputed answers for plain demands (NodeNames mode); null: none, the decision
  // calls checkFit and scoreTerms.
  const PlainAnswers* plain = nullptr;
};

}  // namespace gte
