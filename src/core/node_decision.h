#pragma once
// What one pod gets on one node: the answer of the one per-node decision (NodeDecider::decide),
// which every door reads its part of (with NodePlacement, what it would get there). Filter reads
// the verdict, prioritize the score, explain, bind's re-check, what-if and the simulator the
// placement too; a group member's answer on the node (core/group_answers.h) is part of it, not a
// branch in each door's loop. Values only.
#include <cstdint>
#include <optional>

#include "core/allocation.h"
#include "core/dra_decision.h"
#include "core/fit_outcome.h"
#include "core/group_answers.h"
#include "core/pod_route.h"
#include "core/score_node.h"
#include "core/set_quality.h"

namespace gte {

// The parts of a decision a door asks for (a bit set): each costs only when asked, so filter pays
// for the verdict alone and prioritize for the score alone. Parts not asked keep their defaults.
enum class DecisionPart : std::uint8_t {
  kVerdict = 1,  // fit: verdict and reason
  kScore = 2,    // terms and the 0..100 score
  kSet = 4,      // the link quality of the whole GPUs the pod would get (placement regret)
};

constexpr DecisionPart operator|(DecisionPart a, DecisionPart b) noexcept {
  return static_cast<DecisionPart>(static_cast<std::uint8_t>(a) | static_cast<std::uint8_t>(b));
}
constexpr bool asks(DecisionPart parts, DecisionPart part) noexcept {
  return (static_cast<std::uint8_t>(parts) & static_cast<std::uint8_t>(part)) != 0;
}

inline constexpr DecisionPart kWholeDecision =
    DecisionPart::kVerdict | DecisionPart::kScore | DecisionPart::kSet;

// What the pod would get on the node, by the route it takes there: decide() fills it when the
// door passes one (explain, what-if, the simulator). Apart from NodeDecision, which stays
// trivially destructible, so the loops that never ask for it pay nothing for its vectors.
struct NodePlacement {
  Allocation allocation;                      // GPUs and MIG instances; incomplete: none
  const GpuPick* devicePluginPick = nullptr;  // the device plugin's whole-GPU pick, in the state
  std::optional<DraPlacement> dra;            // where the pod's devices come from DRA
};

struct NodeDecision {
  // False for a candidate the request could not resolve (no state): unresolvable, with the
  // candidate's own `missing` text; nothing else is decided.
  bool resolved = true;
  PodRoute route = PodRoute::kDevicePlugin;
  // The pod's group on this node: kPlanned, a held slot of the group (fits, ranks first);
  // kRefused, refused by the group (`groupRefusal` indexes the answers' refusals); kDecide, no
  // group answer: decided as any pod.
  GroupAnswers::Kind group = GroupAnswers::Kind::kDecide;
  std::uint8_t groupRefusal = 0;

  FitOutcome fit;    // kVerdict: the group's verdict where it answers, else the node's fit
  ScoreTerms terms;  // kScore: all -1 where the node offers no placement or the group answers
  int score = 0;     // kScore: 0..100; the top score on a planned node
  SetQuality set;    // kSet, on a node whose terms fit (unknown below two GPUs)
};

}  // namespace gte
