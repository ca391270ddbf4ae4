#include "core/group_answers.h"

#include <algorithm>

namespace gte {

bool GroupAnswers::anyPlanned() const noexcept {
  return std::find(nodes.begin(), nodes.end(), Kind::kPlanned) != nodes.end();
}

GroupAnswers GroupAnswers::subset(std::span<const std::size_t> indices) const {
  GroupAnswers out;
  out.refusals = refusals;
  out.nodes.reserve(indices.size());
  out.refusal.reserve(indices.size());
  for (const std::size_t i : indices) {
    out.nodes.push_back(nodes[i]);
    out.refusal.push_back(refusal[i]);
  }
  return out;
}

GroupAnswers refuseEvery(std::size_t candidates, Verdict verdict, std::string text) {
  GroupAnswers out;
  out.nodes.assign(candidates, GroupAnswers::Kind::kRefused);
  out.refusal.assign(candidates, 0);
  out.refusals.push_back(GroupNodeRefusal{verdict, std::move(text)});
  return out;
}

}  // namespace gte
