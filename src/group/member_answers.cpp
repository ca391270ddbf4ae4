#include "group/member_answers.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace gte {

GroupAnswers memberAnswers(const CommittedGroupPlan& plan,
                           std::span<const NodeCandidate> candidates,
                           std::span<const NodeGroupFacts* const> facts,
                           std::span<const NodeState* const> openStates,
                           const GroupDomainNames* names) {
  GroupAnswers out;
  out.nodes.assign(candidates.size(), GroupAnswers::Kind::kDecide);
  out.refusal.assign(candidates.size(), 0);
  // The required levels whose domain the plan pins, each with its refusal text.
  std::vector<std::pair<std::size_t, std::uint8_t>> pinned;
  for (std::size_t level = 0; level < plan.levels.size() && level < kMaxGroupLevels; ++level) {
    const std::uint32_t domain = plan.plan.domain[level];
    if (plan.levels[level].mode != GroupLevelMode::kRequired || domain == kMixedDomain) continue;
    const std::string& label = plan.levels[level].label;
    const std::string_view name =
        names != nullptr ? names->name(level, domain) : std::string_view();
    std::string text = domain == kNoDomain
                           ? "group " + plan.group + " is planned on nodes without " + label
                           : "outside the " + label + " domain " + std::string(name) +
                                 " planned for group " + plan.group;
    pinned.emplace_back(level, static_cast<std::uint8_t>(out.refusals.size()));
    out.refusals.push_back(GroupNodeRefusal{Verdict::kUnresolvable, std::move(text)});
  }
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const NodeState* state = candidates[i].state;
    if (state == nullptr) continue;
    if (std::binary_search(openStates.begin(), openStates.end(), state)) {
      out.nodes[i] = GroupAnswers::Kind::kPlanned;
      continue;
    }
    const NodeGroupFacts* nodeFacts = i < facts.size() ? facts[i] : nullptr;
    if (nodeFacts == nullptr) continue;
    for (const auto& [level, refusal] : pinned) {
      if (nodeFacts->domain[level] != plan.plan.domain[level]) {
        out.nodes[i] = GroupAnswers::Kind::kRefused;
        out.refusal[i] = refusal;
        break;
      }
    }
  }
  return out;
}

}  // namespace gte
