#pragma once
// Where a pod's MIG instances would go on a node. One instance (the common case) is a lookup in
// the node's precomputed fits; several are placed greedily, largest profile first, each taking a
// free existing instance if one exists, else (dynamic MIG) the placement that keeps the most
// placement value.
#include <vector>

#include "core/allocation.h"
#include "core/node_state.h"
#include "model/gpu_request.h"

namespace gte {

struct MigPlan {
  bool fits = true;
  int failedRequest = -1;      // index into the requests of the first one that did not fit
  bool unresolvable = false;   // that request could not fit even on the node emptied of pods
  int qualityPermille = 1000;  // mean placement quality of the instances
  int slicesTaken = 0;         // memory slices the instances occupy
  std::vector<MigAssignment> assignments;  // filled only when asked for
};

MigPlan planMig(const std::vector<MigRequest>& requests, const NodeState& state,
                bool wantAssignments);

}  // namespace gte
