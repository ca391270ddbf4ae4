#include "group/group_slots.h"

#include <algorithm>
#include <bit>

#include "core/claims_as_gpus.h"
#include "core/dra_decision.h"
#include "core/fit.h"
#include "core/node_state.h"
#include "core/pod_route.h"
#include "core/predict_allocation.h"
#include "dra_placement/dra_node_state.h"

namespace gte {
namespace {

// checkFit's refusals that depend on the node alone, not on which GPUs are free: too few usable
// GPUs, or links the demand needs that the node cannot vouch for.
bool nodeAdmits(const PodDemand& demand, const NodeState& state, const Policy& policy) {
  const std::int64_t k = demand.gpus;
  if (state.usableCount == 0 || (k > state.usableCount && !state.sharesGpus)) return false;
  // Shared GPUs (min-link, NUMA, MPS multi-replica): filter refuses, so no slot either.
  if (anySharingRefusal(demand, state)) return false;
  if (state.linksKnown()) return true;
  if (demand.minLink && k > 1) return false;
  return k <= 1 || policy.allowMultiGpuOnUnknownTopology;
}

// checkFit's link refusal for one pick of the chain.
bool pickAdmits(const PodDemand& demand, const ChainPick& pick) {
  return !demand.minLink || demand.gpus <= 1 || pick.weakest >= *demand.minLink;
}

Allocation allocationOf(GpuMask gpus) {
  Allocation allocation;
  allocation.complete = true;
  for (GpuMask rest = gpus; rest != 0; rest &= rest - 1) {
    allocation.gpus.push_back(std::countr_zero(rest));
  }
  return allocation;
}

int chainCount(const PodDemand& demand, const NodeState& state, const Policy& policy, int limit) {
  if (!nodeAdmits(demand, state, policy)) return 0;
  if (state.sharesGpus) {
    // Replicas of shared GPUs (docs/sharing.md): members fit while free replicas last, on no set.
    if (state.freeReplicas < 0) return limit;
    return static_cast<int>(std::min<std::int64_t>(limit, state.freeReplicas / demand.gpus));
  }
  int count = 0;
  for (const ChainPick& pick : state.groupChain.forSize(static_cast<int>(demand.gpus))) {
    if (count >= limit || !pickAdmits(demand, pick)) break;
    ++count;
  }
  return count;
}

// Of the first `any` slots of k GPUs, how many hold nothing the health policy avoids: on a shared
// node, where replicas land by tenants on any usable GPU, all of them while no usable GPU is
// marked; else the chain's picks up to the first marked one.
int healthySlots(const NodeState& state, int k, int any) {
  if (state.sharesGpus) return (state.usableMask & state.avoided.degraded) == 0 ? any : 0;
  int well = 0;
  for (const ChainPick& pick : state.groupChain.forSize(k)) {
    if (well >= any || !state.avoided.healthy(pick.gpus)) break;
    ++well;
  }
  return well;
}

// The whole GPUs the state counts as taken, as usage: rebuilding the state's labels with it gives
// the same free GPUs however the state was built (charges, a simulator's usage, labels alone).
// On a shared node the replicas the state lays beyond its labels' tenants come along as one entry:
// laid one by one on the least-held GPU, they fall as they did however they were grouped in pods.
NodeUsage takenOf(const NodeState& state) {
  NodeUsage usage;
  for (GpuMask rest = state.usableMask & ~state.freeMask; rest != 0; rest &= rest - 1) {
    usage.gpus.push_back(std::countr_zero(rest));
  }
  if (state.sharesGpus) {
    int laid = 0;
    for (int gpu = 0; gpu < state.gpuCount; ++gpu)
      laid += state.tenantsOf(gpu) - std::min(state.topology.tenantsOf(gpu), 255);
    if (laid > 0) usage.replicas.push_back(laid);
  }
  return usage;
}

// The whole GPUs a tiered claim member gets on the node (the allocator's first-fit over
// `devices`, or the node's own, as filter decides it), its devices then marked in use in
// `devices`: nullopt when it does not fit, or its devices are not exactly its count of mapped whole
// GPUs (MIG or other devices, an unmapped GPU: the planner cannot hold those).
std::optional<Allocation> nextClaimSet(DraDecider& decider, const PodDemand& demand,
                                       const NodeState& state, const Policy& policy,
                                       dra::NodeDevices* devices) {
  const DraPlacement placed = decider.place(state, false, devices);
  if (!wholeGpuSet(placed, demand) || !decider.judge(placed, demand, state, policy).fits()) {
    return std::nullopt;
  }
  if (devices != nullptr) {
    for (const dra::PickedDevice& picked : placed.result.devices)
      devices->devices[picked.position].inUse = true;
  }
  return allocationOf(placed.pick.gpus);
}

// Tiered claim members one after another on one copy of the node's DRA devices, each member's
// devices in use for the next (the state's devices already skip the node's holds: takeForClaims):
// a first-fit per member, no node rebuilt. `count` members: demands[i] for member i, or with one
// demand, that demand each time (a slot count).
std::vector<Allocation> claimSets(const NodeState& state, std::span<const PodDemand> demands,
                                  const Policy& policy, std::size_t count) {
  std::vector<Allocation> out;
  if (!state.dra || demands.empty() || (demands.size() > 1 && count > demands.size())) return out;
  dra::NodeDevices devices = state.dra->devices;
  std::optional<DraDecider> decider;
  const DraDemand* decided = nullptr;
  for (std::size_t i = 0; i < count; ++i) {
    const PodDemand& demand = demands[demands.size() == 1 ? 0 : i];
    if (!demand.draClaims()) break;
    if (decided != demand.dra.get()) {
      decider.emplace(*demand.dra);
      decided = demand.dra.get();
    }
    std::optional<Allocation> set = nextClaimSet(*decider, demand, state, policy, &devices);
    if (!set) break;
    out.push_back(std::move(*set));
  }
  return out;
}

// The members placed one at a time on states rebuilt with their predecessors' devices taken (on
// a DRA node, for claims too: takeForClaims).
std::vector<Allocation> rebuiltSets(const NodeState& state, std::span<const PodDemand> demands,
                                    const Policy& policy) {
  std::vector<Allocation> out;
  NodeUsage usage = takenOf(state);
  for (const PodDemand& demand : demands) {
    const NodeStateConstSharedPtr now = rebuildNodeState(state, usage, policy);
    if (demand.empty()) break;
    if (demand.draClaims()) {
      DraDecider decider(*demand.dra);
      std::optional<Allocation> set = nextClaimSet(decider, demand, *now, policy, nullptr);
      if (!set) break;
      addToUsage(usage, *set);
      out.push_back(std::move(*set));
      continue;
    }
    if (!checkFit(demand, *now, policy).fits()) break;
    Allocation allocation = predictAllocation(demand, *now);
    if (!allocation.complete) break;
    addToUsage(usage, allocation);
    out.push_back(std::move(allocation));
  }
  return out;
}

}  // namespace

GroupSlots countGroupSlots(const NodeState& state, const Policy& policy) {
  GroupSlots slots;
  for (int k = 1; k <= kChainSizes; ++k) {
    PodDemand demand;
    demand.gpus = k;
    const auto at = static_cast<std::size_t>(k - 1);
    slots.any[at] = static_cast<std::uint8_t>(chainCount(demand, state, policy, 255));
    slots.healthy[at] = static_cast<std::uint8_t>(healthySlots(state, k, slots.any[at]));
    demand.minLink = LinkClass::kNvlink;
    // The NVLink slots checkFit would grant a `min-link: nvlink` member, degraded or not (a warning
    // refuses no pod); which slots are healthy is `healthy` above.
    slots.nvlink[at] = static_cast<std::uint8_t>(chainCount(demand, state, policy, 255));
  }
  return slots;
}

bool chainCovers(const PodDemand& demand) noexcept {
  // An exclusive member goes through the rebuilt states, whose checkFit refuses shared GPUs.
  return demand.mig.empty() && !demand.singleNuma && demand.isolation != Isolation::kExclusive &&
         demand.replicasOn == ReplicasOn::kAny && demand.gpus >= 1 && demand.gpus <= kChainSizes;
}

std::optional<PodDemand> slotDemand(const PodDemand& demand, const NodeState& state) {
  switch (routeOn(demand, state)) {
    case PodRoute::kDevicePlugin:
      return demand;
    case PodRoute::kClaimsAsGpus:
      return claimsAsGpus(demand);
    case PodRoute::kDraFirstFit:
      if (plannedByFirstFit(demand)) return demand;
      break;
    case PodRoute::kPassedThrough:
      break;
  }
  return std::nullopt;
}

bool wholeGpuSet(const DraPlacement& placed, const PodDemand& member) noexcept {
  return placed.outcome == DraOutcome::kPlaced && placed.migDevices == 0 &&
         placed.wholeGpus == member.dra->tieredDevices &&
         std::popcount(placed.pick.gpus) == placed.wholeGpus;
}

bool plannedByFirstFit(const PodDemand& member) noexcept {
  return member.draClaims() && member.dra->tieredDevices > 0 && member.gpus == 0 &&
         member.mig.empty();
}

int groupSlotCount(const PodDemand& member, const NodeState& state, const Policy& policy,
                   int limit) {
  const std::optional<PodDemand> gpus = slotDemand(member, state);
  if (!gpus) return 0;
  const PodDemand& demand = *gpus;
  if (demand.empty() || limit <= 0) return 0;
  // On a shared node chainCount counts replicas, its refusals (nodeAdmits) are filter's; MIG and
  // replicas-on members go through the rebuilt states.
  const bool byReplicas = state.sharesGpus && !demand.draClaims() && demand.mig.empty() &&
                          demand.replicasOn == ReplicasOn::kAny;
  if (chainCovers(demand) || byReplicas) return chainCount(demand, state, policy, limit);
  if (demand.draClaims()) {
    // Each tiered member takes its count of free whole GPUs: a bound before any first-fit.
    limit = static_cast<int>(
        std::min<std::int64_t>(limit, state.freeCount / demand.dra->tieredDevices));
    if (limit <= 0) return 0;
    return static_cast<int>(
        claimSets(state, std::span(&demand, 1), policy, static_cast<std::size_t>(limit)).size());
  }
  const std::vector<PodDemand> same(static_cast<std::size_t>(limit), demand);
  return static_cast<int>(rebuiltSets(state, same, policy).size());
}

std::vector<Allocation> groupSlotSets(const NodeState& state, std::span<const PodDemand> members,
                                      const Policy& policy) {
  std::vector<PodDemand> demands;
  demands.reserve(members.size());
  for (const PodDemand& member : members) {
    std::optional<PodDemand> gpus = slotDemand(member, state);
    if (!gpus) break;  // claims this node does not decide as GPUs: no slot here, nor after
    demands.push_back(std::move(*gpus));
  }
  const bool chained =
      !demands.empty() && std::all_of(demands.begin(), demands.end(), [&](const PodDemand& d) {
        return chainCovers(d) && d.gpus == demands.front().gpus;
      });
  // Tiered claims alone: one copy of the node's devices, a first-fit per member.
  const bool claimsOnly =
      !demands.empty() &&
      std::all_of(demands.begin(), demands.end(), [](const PodDemand& d) { return d.draClaims(); });
  if (claimsOnly) return claimSets(state, demands, policy, demands.size());
  // Shared GPUs: each member's replicas, as the fit check and the predicted allocation count them.
  if (!chained || state.sharesGpus) return rebuiltSets(state, demands, policy);
  std::vector<Allocation> out;
  const std::span<const ChainPick> picks =
      state.groupChain.forSize(static_cast<int>(demands.front().gpus));
  for (std::size_t i = 0; i < demands.size() && i < picks.size(); ++i) {
    if (!nodeAdmits(demands[i], state, policy) || !pickAdmits(demands[i], picks[i])) break;
    out.push_back(allocationOf(picks[i].gpus));
  }
  return out;
}

}  // namespace gte
