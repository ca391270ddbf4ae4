#include "service/group_outcome.h"

namespace gte {

GroupOutcome groupOutcomeOf(GroupPlanStatus status) noexcept {
  switch (status) {
    case GroupPlanStatus::kPlanned:
      return GroupOutcome::kPlanned;
    case GroupPlanStatus::kNoRoom:
      return GroupOutcome::kNoRoom;
    case GroupPlanStatus::kNeverFits:
      return GroupOutcome::kNeverFits;
    case GroupPlanStatus::kUnplaced:
      return GroupOutcome::kUnplaced;
    case GroupPlanStatus::kUnsupported:
      return GroupOutcome::kUnsupported;
  }
  return GroupOutcome::kUnplaced;
}

std::string_view groupOutcomeName(GroupOutcome outcome) noexcept {
  switch (outcome) {
    case GroupOutcome::kPlanned:
      return "planned";
    case GroupOutcome::kNoRoom:
      return "no_room";
    case GroupOutcome::kNeverFits:
      return "never_fits";
    case GroupOutcome::kUnplaced:
      return "unplaced";
    case GroupOutcome::kUnsupported:
      return "unsupported";
    case GroupOutcome::kSizeUnknown:
      return "size_unknown";
    case GroupOutcome::kStale:
      return "stale";
  }
  return "unplaced";
}

std::vector<std::string_view> groupOutcomeNames() {
  std::vector<std::string_view> names;
  for (auto d = static_cast<std::uint8_t>(GroupOutcome::kPlanned);
       d <= static_cast<std::uint8_t>(GroupOutcome::kStale); ++d) {
    names.push_back(groupOutcomeName(static_cast<GroupOutcome>(d)));
  }
  return names;
}

}  // namespace gte
