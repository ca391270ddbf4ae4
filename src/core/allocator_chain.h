#pragma once
// The node allocator's successive picks (member 1 gets the pick over the free GPUs, member 2 the
// pick over what member 1 left, ...), precomputed per node state for sizes 1-8: what the
// group planner counts a node's slots from (group/group_slots.h). The allocator is the NVIDIA
// device plugin, or on a DRA node the scheduler's first-fit in the node's device order
// (docs/dra.md, "Who hands out nvidia.com/gpu on a node"). Pure: no I/O, clock, locks or globals.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "policy/link_class.h"
#include "topology/gpu_topology.h"

namespace gte {

struct PairTable;
struct PickBudget;

// Pick sizes every node state precomputes.
inline constexpr int kChainSizes = 8;

// One set of the chain and the weakest link inside it (kNvlink for one GPU).
struct ChainPick {
  GpuMask gpus = 0;
  LinkClass weakest = LinkClass::kUnknown;
  friend bool operator==(const ChainPick&, const ChainPick&) = default;
};

// Per size k in 1..kChainSizes: the allocator's successive k-GPU picks over the node's free GPUs,
// until fewer than k are left.
struct AllocatorChain {
  std::array<std::uint16_t, kChainSizes + 1> begin{};  // picks of size k: [begin[k-1], begin[k])
  std::vector<ChainPick> picks;

  std::span<const ChainPick> forSize(int k) const noexcept {
    if (k < 1 || k > kChainSizes) return {};
    const auto at = static_cast<std::size_t>(k);
    return std::span<const ChainPick>(picks).subspan(begin[at - 1], begin[at] - begin[at - 1]);
  }
};

// The chain over `free` for every size. `firstPicks[k]` is the pick over `free` already computed
// for size k (0: none). With a null `draOrder` each further pick is the device plugin's (from
// the pairs' scores); on a node that hands GPUs out through DRA (docs/dra.md) `draOrder` is its
// plain order (non-null, maybe empty) and each pick the allocator's first fit: the first k GPUs of
// that order the picks before it left free, the set DRA will really give, not a best set.
AllocatorChain computeAllocatorChain(const PairTable& table, GpuMask free, bool linksKnown,
                                     std::span<const GpuMask> firstPicks, PickBudget* budget,
                                     const std::vector<int>* draOrder = nullptr);

}  // namespace gte
