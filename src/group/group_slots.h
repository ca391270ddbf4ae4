#pragma once
// How many members of a pod group one node can take, and which GPUs each would get: for
// whole-GPU members of 1-8 GPUs, the node allocator's successive picks each node state
// precomputes (core/allocator_chain.h); for others, the members placed one at a time. The planner
// (group/group_plan.h) counts a domain's capacity in these slots, not in raw free GPUs: a 4-GPU
// member with `min-link: nvlink` needs four NVLink-connected GPUs, and eight free GPUs of two PCIe
// islands may hold only one such set. Pure: no I/O, clock, locks or globals.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/allocation.h"
#include "core/allocator_chain.h"
#include "core/dra_decision.h"
#include "core/pod_demand.h"
#include "policy/link_class.h"
#include "policy/policy.h"
#include "topology/gpu_topology.h"

namespace gte {

struct NodeState;

// How many members of k GPUs (index k - 1) fit the node one after another, as checkFit would
// decide for each on the node its predecessors left: with no link demand, and with
// `min-link: nvlink`.
struct GroupSlots {
  std::array<std::uint8_t, kChainSizes> any{};
  std::array<std::uint8_t, kChainSizes> nvlink{};
  // Of the `any` slots, the first ones whose sets hold nothing the health policy avoids (a
  // degraded GPU; for 2+ GPUs, a degraded or down NVLink pair): the planner fills nodes whose
  // slots are healthy first (docs/health.md).
  std::array<std::uint8_t, kChainSizes> healthy{};
  friend bool operator==(const GroupSlots&, const GroupSlots&) = default;
};

// The slot counts of a state whose chain is built (checkFit's rules for plain and NVLink demands).
GroupSlots countGroupSlots(const NodeState& state, const Policy& policy);

// Whether a member's slots can be read from the precomputed chain: k whole GPUs (1..8), no MIG,
// no NUMA demand (any min-link), not exclusive. Other members go through groupSlotSets' rebuilt
// states.
bool chainCovers(const PodDemand& demand) noexcept;

// A member whose claims ask N devices of one class in tiers (DraDemand::tieredDevices; no
// nvidia.com/gpu or MIG request beside them): on a node where the allocator's first-fit decides
// them (PodRoute::kDraFirstFit), its slots are the first-fit's sets, one member after another.
bool plannedByFirstFit(const PodDemand& member) noexcept;

// Whether a tiered member's placement is exactly its count of mapped whole GPUs (no MIG or other
// device, no unmapped GPU): only such a set is a slot the planner can hold.
bool wholeGpuSet(const DraPlacement& placed, const PodDemand& member) noexcept;

// The member as the node's slots count it: itself, or for a member with DRA claims the whole
// GPUs its claims amount to on a node that decides them so (core/claims_as_gpus.h), or the member
// itself where the first-fit decides its tiered claims (plannedByFirstFit); nullopt for other
// claims (a class the node does not hand out, companions, MIG devices): no slot there.
std::optional<PodDemand> slotDemand(const PodDemand& member, const NodeState& state);

// How many members with `demand` fit the node one after another, at most `limit`; exact for
// demands the chain covers, else the members rebuilt one at a time (tiered claims: the
// first-fit on each rebuilt state, each set exactly N mapped whole GPUs). 0 for a member asking for
// no GPU or MIG device, or one with no slot on the node (slotDemand).
int groupSlotCount(const PodDemand& demand, const NodeState& state, const Policy& policy,
                   int limit);

// The allocations `demands` get on this node when placed in this order, each on the node its
// predecessors left (the node allocator's picks, as predictAllocation gives them: on a DRA node
// the first-fit sets); stops at the first demand that does not fit or has no slot on the node
// (the result is then shorter). `state` must be built under `policy`.
std::vector<Allocation> groupSlotSets(const NodeState& state, std::span<const PodDemand> demands,
                                      const Policy& policy);

}  // namespace gte
