#include "policy/group_levels.h"

namespace gte {

std::string_view groupLevelModeName(GroupLevelMode mode) noexcept {
  switch (mode) {
    case GroupLevelMode::kRequired:
      return "required";
    case GroupLevelMode::kPreferred:
      return "preferred";
    case GroupLevelMode::kIgnored:
      return "ignore";
  }
  return "preferred";
}

std::optional<GroupLevelMode> groupLevelModeFromName(std::string_view name) noexcept {
  if (name == "required") return GroupLevelMode::kRequired;
  if (name == "preferred") return GroupLevelMode::kPreferred;
  if (name == "ignore") return GroupLevelMode::kIgnored;
  return std::nullopt;
}

GroupsPolicy defaultGroupsPolicy() {
  GroupsPolicy groups;
  groups.levels = {
      {"nvidia.com/gpu.clique", GroupLevelMode::kRequired},
      {"network.topology.nvidia.com/accelerator", GroupLevelMode::kPreferred},
      {"network.topology.nvidia.com/block", GroupLevelMode::kPreferred},
      {"network.topology.nvidia.com/spine", GroupLevelMode::kPreferred},
  };
  return groups;
}

}  // namespace gte
