#pragma once
// A pod group's answer for one member on each node of its request, as the per-node decision takes
// it (NodeDecider): kPlanned, a held slot of the group (fits, ranks first); kRefused, refused by
// the group with a reason; kDecide, decided as any pod. The group room works the answers out
// (group/member_answers.h); filter, prioritize and explain pass them to the decision, so the
// three agree. Pure.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/fit_outcome.h"

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

// Every candidate refused with one reason (a required level cannot hold the group now).
GroupAnswers refuseEvery(std::size_t candidates, Verdict verdict, std::string text);

}  // namespace gte
