#pragma once
// How many k-GPU pods of the all-NVLink class a node's free GPUs could still take at once: the
// most disjoint sets of k free GPUs in which every pair is joined by NVLink. The what-if reports
// these before and after each placement (what a placement strands), for k = 1, 2, 4 and 8. Pure.
#include <array>
#include <cstddef>
#include <cstdint>

#include "core/node_state.h"
#include "policy/link_class.h"

namespace gte {

inline constexpr std::array<int, 4> kFreeSetSizes = {1, 2, 4, 8};

// Index i counts the sets of kFreeSetSizes[i] GPUs.
using FreeSetCounts = std::array<int, kFreeSetSizes.size()>;

// k = 1: the free GPUs. k >= 2: the most disjoint all-NVLink k-sets among the free GPUs; 0 when
// the node's links are unknown (nothing is known to be NVLink). Exact for every real node (up to
// 16 GPUs); a search past its allowance (a 16-GPU table without structure) returns the most it
// found by then (LinkSets below).
int freeNvlinkSets(const NodeState& state, int k);
FreeSetCounts freeNvlinkSets(const NodeState& state);

// Sets of k GPUs of one node all of whose pairs are at least some link class, for as many
// questions as needed (the topology-health figures ask several per node): the pair classes are
// read once. Where the qualifying pairs among the GPUs asked about form cliques (NVSwitch, PCIe
// switch trees, one class everywhere) the answers are arithmetic; otherwise (a cube mesh) an exact
// search memoised over subsets, with a work allowance only more than 8 GPUs without that
// structure can exhaust (the answer is then the most found: approximate()).
class LinkSets {
 public:
  explicit LinkSets(const NodeState& state);
  // The most disjoint k-sets among `members` whose pairs are all at least `floor` (k = 1: the
  // members).
  int most(GpuMask members, LinkClass floor, int k);
  // The members that lie in some such set.
  GpuMask covered(GpuMask members, LinkClass floor, int k);
  bool approximate() const noexcept { return approximate_; }

 private:
  using Adjacency = std::array<GpuMask, kMaxGpus>;
  // Per GPU, the GPUs whose pair with it is at least `floor` (built once per floor).
  const Adjacency& atLeast(LinkClass floor);

  int n_;
  std::array<std::array<LinkClass, kMaxGpus>, kMaxGpus> classes_;
  std::array<Adjacency, kLinkClassCount> adjacency_{};
  std::uint32_t built_ = 0;  // bit c: adjacency_[c] is built
  bool approximate_ = false;
};

}  // namespace gte
