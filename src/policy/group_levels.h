#pragma once
// The `groups:` section of the policy: how long planned capacity of a pod group is held, and the
// topology levels (node-label keys, innermost first) a group is kept inside. Plain data, part of
// Policy; docs/groups.md explains the planning these keys steer.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gte {

// How a level constrains a group (docs/groups.md#levels).
enum class GroupLevelMode : std::uint8_t {
  kRequired,   // the group must fit inside one domain of the level (members outside are refused)
  kPreferred,  // the group goes inside one domain when one can hold it; else the next level decides
  kIgnored,    // not considered (a pod may switch it on with `<prefix>group-levels`)
};
std::string_view groupLevelModeName(GroupLevelMode mode) noexcept;
std::optional<GroupLevelMode> groupLevelModeFromName(std::string_view name) noexcept;

struct GroupLevel {
  std::string label;  // node-label key; its value names the domain ("nvidia.com/gpu.clique")
  GroupLevelMode mode = GroupLevelMode::kPreferred;
  friend bool operator==(const GroupLevel&, const GroupLevel&) = default;
};

// At most this many levels: the snapshot keeps each node's domain per level inline.
inline constexpr std::size_t kMaxGroupLevels = 4;
// The largest group size a pod may state (`<prefix>group-size`) or an owner may report.
inline constexpr std::int64_t kMaxGroupSize = 10000;

struct GroupsPolicy {
  // Planned capacity not claimed by a member within this long (since the plan, or since the last
  // member bound) is released.
  std::int64_t holdTtlMillis = 60'000;
  std::vector<GroupLevel> levels;  // innermost first
  // Whether a group's members land on nodes of one GPU model and fabric (docs/groups.md, "One GPU
  // model"): kPreferred, whenever the nodes of one model can hold the group, inside whatever
  // domain the levels choose; kIgnored, models mix freely. kRequired is not offered.
  GroupLevelMode sameModel = GroupLevelMode::kPreferred;
  friend bool operator==(const GroupsPolicy&, const GroupsPolicy&) = default;
};

// nvidia.com/gpu.clique required, then topograph's accelerator, block and spine preferred.
GroupsPolicy defaultGroupsPolicy();

}  // namespace gte
