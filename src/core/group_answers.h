#pragma once
// How a member of a planned pod group is answered on each node of its request
// (docs/groups.md#answers): a node where its group holds an unclaimed slot of the member's shape
// fits (the held GPUs were kept for it) and ranks first; a node outside the plan's domain of a
// `required` level is refused; any other node is decided as for a pod without a group. Filter,
// prioritize and explain take these answers next to the per-node decision (NodeDecider), so the
// three agree. Pure.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/committed_group_plan.h"
#include "core/fit_outcome.h"
#include "core/group_domains.h"
#include "core/node_candidate.h"

namespace gte {

struct GroupNodeRefusal {
  Verdict verdict = Verdict::kUnresolvable;
  std::string text;  // without the wire prefix
};

struct GroupAnswers {
  enum class Kind : std::uint8_t {
    kDecide,   // as any pod: NodeDecider
    kPlanned,  // a held slot of the group: fits, ranks first
    kRefused,  // refusals[refusal[i]]
  };
  std::vector<Kind> nodes;            // per candidate, in the candidates' order
  std::vector<std::uint8_t> refusal;  // per candidate; meaningful for kRefused
  std::vector<GroupNodeRefusal> refusals;

  bool anyPlanned() const noexcept;
  // The answers of the candidates at `indices`, in that order (explain's kept nodes).
  GroupAnswers subset(std::span<const std::size_t> indices) const;
};

// `facts[i]` belongs to `candidates[i]` (null: unknown, decided as any pod); `openStates` are the
// states, in the candidates' snapshot, of the nodes where the plan holds a slot of the member's
// shape, sorted.
GroupAnswers memberAnswers(const CommittedGroupPlan& plan,
                           std::span<const NodeCandidate> candidates,
                           std::span<const NodeGroupFacts* const> facts,
                           std::span<const NodeState* const> openStates,
                           const GroupDomainNames* names);

// Every candidate refused with one reason (a required level cannot hold the group now).
GroupAnswers refuseEvery(std::size_t candidates, Verdict verdict, std::string text);

}  // namespace gte
