#pragma once
// The pod-group planner: where a whole group goes, decided once, at its first member's filter
// (docs/groups.md#planning). Over the candidate nodes of that request it picks
//   1. the domain: the innermost level (policy order, per-pod modes applied) with a domain that can
//      hold every member still to place, counted in slots of the link class each member needs
//      (group/group_slots.h), not in raw free GPUs; among those the one that holds the group on
//      healthy sets, then on more NVLink sets, then needs the fewest nodes with every GPU free,
//      then the best fit (fewest free GPUs left, then fewest spare slots, then name), so that
//      bigger groups still find a domain later.
//      Members already placed (anchors) pin the domain. A `required` level that no domain can
//      satisfy refuses the group, unless nodes without the level's label can take it (a level
//      constrains only nodes that carry its label); a `preferred` one hands over to the next level;
//      with no level left, per-node GPU sets alone decide;
//   2. each member's node inside that domain, filling the nodes with the fewest slots first;
//   3. each member's GPU set there: the device plugin's pick on the node as the members before it
//      on that node leave it.
// Pure: no I/O, clock, locks or globals. The extender calls it from filter (service/group_requests)
// and explain; the simulator calls it directly with the same inputs.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/allocation.h"
#include "core/node_state.h"
#include "core/pod_demand.h"
#include "group/group_domains.h"
#include "policy/group_levels.h"
#include "policy/policy.h"

namespace gte {

// One candidate node: its state as the request sees it and its precomputed group facts
// (nodeGroupFacts; the snapshot keeps them beside each node's state).
struct GroupPlanNode {
  std::string_view name;
  const NodeState* state = nullptr;       // never null
  const NodeGroupFacts* facts = nullptr;  // never null
};

struct GroupPlanInput {
  std::string_view group;                         // "namespace/name", for messages
  std::span<const GroupLevel> levels;             // PodGroupRef::levels: index i is facts.domain[i]
  const GroupDomainNames* domainNames = nullptr;  // for messages; null: ids are shown
  std::span<const GroupPlanNode> nodes;           // the candidates, in any order
  std::span<const PodDemand> members;             // one slot each; members asking for nothing
                                                  // have no slot and are left out by the caller
  std::span<const GroupDomainIds> anchors;  // the domains of members already bound or reserved
  // The pod's one-GPU-model mode (PodGroupRef::sameModel); nullopt: the policy's.
  std::optional<GroupLevelMode> sameModel;
  bool explain = false;  // keep a verdict for every domain considered (cheap: no text)
};

struct PlannedSlot {
  std::string node;
  Allocation allocation;     // the GPUs the member gets there
  std::uint32_t member = 0;  // index into GroupPlanInput::members
  friend bool operator==(const PlannedSlot&, const PlannedSlot&) = default;
};

enum class GroupPlanStatus : std::uint8_t {
  kPlanned,      // `slots` hold every member
  kUnplaced,     // no level demands it and the candidates cannot hold the whole group now: its
                 // members are placed one by one, as pods without a group
  kNoRoom,       // a required level cannot hold the group now: members are refused (preemption
                 // may help)
  kNeverFits,    // a required level cannot hold the group even with every GPU free
  kUnsupported,  // members asking for MIG devices are not planned: placed one by one
};
std::string_view groupPlanStatusName(GroupPlanStatus status) noexcept;

// A domain the planner looked at, and what it made of it (explain; domainVerdictText words it).
struct DomainVerdict {
  enum class Outcome : std::uint8_t {
    kChosen,
    kTooSmall,           // fewer slots (or free GPUs) than the members need
    kAnchoredElsewhere,  // members already placed are in another domain of the level
    kLessTight,          // holds the group, but the chosen domain comes first in the order
                         // (healthy sets, NVLink sets, fewer nodes with every GPU free needed,
                         // fewer free GPUs left after placing, fewer spare slots)
    kNoGpuSets,          // enough slots by count, but the nodes cannot hold every member's set
    kSpansRequired,      // its nodes lie in several domains of a required level
    kMixesModels,        // tighter, but cannot hold the group on one GPU model, which `other`
                         // can (GroupsPolicy::sameModel)
  };
  std::size_t level = 0;
  std::uint32_t domain = kNoDomain;
  std::int64_t slots = 0;   // members of the counted shape it can take now
  std::int64_t needed = 0;  // members of that shape the group needs
  std::int64_t spare = 0;   // kChosen, kLessTight: what is left over
  Outcome outcome = Outcome::kTooSmall;
  std::uint32_t other = kNoDomain;  // kLessTight: the chosen domain; kAnchoredElsewhere: where
  std::int64_t otherSpare = 0;      // kLessTight: the chosen domain's spare
  std::int64_t freeGpus = 0;        // free GPUs of its candidate nodes
  std::int64_t otherFreeGpus = 0;   // kLessTight: the chosen domain's
  std::int64_t neededGpus = 0;      // GPUs the members still to place ask for, all together
  // The fewest nodes with every usable GPU free that the members its partly used nodes cannot
  // take would need (the domain order's key before free GPUs), and the chosen domain's.
  std::int64_t freeNodesNeeded = 0;
  std::int64_t otherFreeNodesNeeded = 0;  // kLessTight
  // The order's first keys, and the chosen domain's (kLessTight): whether it holds the group on
  // sets without degraded hardware, and how many members it holds on all-NVLink sets (counted for
  // members of 2+ GPUs that accept any link; else 0).
  bool healthy = true;
  bool otherHealthy = true;
  std::int64_t nvlinkMembers = 0;
  std::int64_t otherNvlinkMembers = 0;
};

// Where `domain[i]` names no single domain of level i.
inline constexpr std::uint32_t kMixedDomain = 0xfffffffeu;

struct GroupPlan {
  GroupPlanStatus status = GroupPlanStatus::kUnplaced;
  int level = -1;  // the level whose domain holds the plan; -1: per-node GPU sets alone
  // Per level, the domain every planned node and anchor shares: kNoDomain when none of them
  // carries the label, kMixedDomain when they do not share one.
  GroupDomainIds domain{kNoDomain, kNoDomain, kNoDomain, kNoDomain};
  std::vector<PlannedSlot> slots;  // kPlanned: one per member, by node
  // kPlanned: which domain and why ("nvidia.com/gpu.clique=c7: best fit, 2 of 18 slots spare");
  // otherwise the text members are refused with or placed one by one for.
  std::string reason;
  std::vector<DomainVerdict> domains;  // with GroupPlanInput::explain
};

// "best fit prefers c7 (1 left over against 0)", "holds 12 of the 16 members", ...
std::string domainVerdictText(const DomainVerdict& verdict, const GroupDomainNames* names);

GroupPlan planGroup(const GroupPlanInput& input, const Policy& policy);

// "16 pods x 4 GPUs (min-link nvlink)", or "5 pods, 18 GPUs" for members of different sizes.
std::string describeMembers(std::span<const PodDemand> members);

}  // namespace gte
