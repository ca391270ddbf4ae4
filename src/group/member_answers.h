#pragma once
// A planned pod group's answers for one member on each node of its request (docs/groups.md#answers,
// the input the per-node decision takes: core/group_answers.h): a node where its group holds an
// unclaimed slot of the member's shape fits and ranks first; a node outside the plan's domain of a
// `required` level is refused; any other node is decided as for a pod without a group. Pure.
#include <span>

#include "core/group_answers.h"
#include "core/node_candidate.h"
#include "group/committed_group_plan.h"
#include "group/group_domains.h"

namespace gte {

// `facts[i]` belongs to `candidates[i]` (null: unknown, decided as any pod); `openStates` are the
// states, in the candidates' snapshot, of the nodes where the plan holds a slot of the member's
// shape, sorted.
GroupAnswers memberAnswers(const CommittedGroupPlan& plan,
                           std::span<const NodeCandidate> candidates,
                           std::span<const NodeGroupFacts* const> facts,
                           std::span<const NodeState* const> openStates,
                           const GroupDomainNames* names);

}  // namespace gte
