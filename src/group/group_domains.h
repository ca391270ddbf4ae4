#pragma once
// The topology domains of pod-group levels, and the facts about one node that planning a group
// reads for every candidate: its slot counts (group/group_slots.h) and, per policy level, the
// domain its label names. Domain names are interned into small ids per level so that a plan over
// 5,000 candidates adds integers instead of hashing strings. Pure: no I/O, clock, locks or globals.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "group/group_slots.h"
#include "model/string_map.h"
#include "policy/group_levels.h"

namespace gte {

struct NodeState;

// A node without the level's label.
inline constexpr std::uint32_t kNoDomain = 0xffffffffu;

using GroupDomainIds = std::array<std::uint32_t, kMaxGroupLevels>;

struct NodeGroupFacts {
  GroupSlots slots;
  GroupDomainIds domain{kNoDomain, kNoDomain, kNoDomain, kNoDomain};  // per policy level
  std::uint8_t freeGpus = 0;
  std::uint8_t usableGpus = 0;
  // A 64-bit hash of the node's GPU model and fabric: what "one GPU model" compares
  // (GroupsPolicy::sameModel), here so the planner reads no node state to tell models apart.
  std::uint64_t modelKey = 0;
  std::uint8_t largestNvlinkClique = 0;  // largest all-NVLink set of free GPUs (NodeState's)
};

// What planning reads of a node, from its state (built under `policy`) and its domain ids: its
// slots counted here from the state's allocator chain.
NodeGroupFacts nodeGroupFacts(const NodeState& state, const GroupDomainIds& domain,
                              const Policy& policy);

// Each level's domain names by id. Immutable once published.
struct GroupDomainNames {
  std::array<std::vector<std::string>, kMaxGroupLevels> byLevel;

  // "" for kNoDomain or an unknown id.
  std::string_view name(std::size_t level, std::uint32_t id) const noexcept;
};
using GroupDomainNamesConstSharedPtr = std::shared_ptr<const GroupDomainNames>;

// Assigns ids to the label values of the policy's levels, first come first numbered. Ids never
// change while the levels stay the same (a plan made on one snapshot reads the same ids on the
// next); new levels start over. Not thread-safe: one owner (the snapshot builder, a simulator).
class GroupDomainInterner {
 public:
  // Starts over when `levels` differ from the last call's.
  void setLevels(const std::vector<GroupLevel>& levels);
  // The node's domain per level (kNoDomain where it lacks the label).
  GroupDomainIds idsOf(const StringMap& labels);
  // The names so far; a new object only after new names were added since the last call.
  GroupDomainNamesConstSharedPtr names();

 private:
  std::vector<std::string> labels_;
  std::array<std::unordered_map<std::string, std::uint32_t>, kMaxGroupLevels> ids_;
  std::shared_ptr<GroupDomainNames> building_ = std::make_shared<GroupDomainNames>();
  GroupDomainNamesConstSharedPtr published_;
};

}  // namespace gte
