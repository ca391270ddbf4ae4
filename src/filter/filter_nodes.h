#pragma once
// One filter request: the fit check for every candidate node, with each distinct reason text
// formatted once (reasons depend on the category and the pod's request only, so kube-scheduler can
// group identical messages across nodes). Pure: no I/O, clock, locks or globals.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "core/fit_outcome.h"
#include "core/group_answers.h"
#include "core/node_candidate.h"
#include "core/pod_demand.h"
#include "policy/policy.h"

namespace gte {

struct NodeVerdict {
  Verdict verdict = Verdict::kFit;
  std::uint32_t reason = 0;  // index into FilterResult::reasons; unused for kFit
};

struct FilterResult {
  std::vector<NodeVerdict> nodes;    // one per candidate, in the candidates' order
  std::vector<std::string> reasons;  // distinct reason texts, without the wire prefix

  std::uint64_t count(Verdict verdict) const noexcept;
};

// A demand that failed to parse (an invalid annotation or request) rejects every node as
// unresolvable with its error message: no node can help. A candidate without a state is
// unresolvable with its `missing` text. `group` (one answer per candidate, or null) holds a pod
// group member's answers: its held slots fit, refusals are refused, the rest decided as usual.
FilterResult filterNodes(const Result<PodDemand>& demand, std::span<const NodeCandidate> nodes,
                         const Policy& policy, const GroupAnswers* group = nullptr);

}  // namespace gte
