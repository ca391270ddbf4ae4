#include "core/node_health.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <vector>

#include "core/fragmentation.h"
#include "topology/mig_placement.h"
#include "topology/pair_table.h"

namespace gte {
namespace {

// adjacency[i]: the GPUs j != i whose pair with i is at least some link class.
using Adjacency = std::array<GpuMask, kMaxGpus>;

// The node's pair classes, read from the topology once.
class PairClasses {
 public:
  PairClasses(const GpuTopology& topology, int n) : n_(n) {
    for (int i = 0; i < n; ++i) {
      for (int j = i + 1; j < n; ++j) {
        const LinkClass cls = topology.linkClass(i, j);
        classes_[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = cls;
        classes_[static_cast<std::size_t>(j)][static_cast<std::size_t>(i)] = cls;
      }
    }
  }

  Adjacency atLeast(LinkClass floor) const {
    Adjacency adjacency{};
    for (int i = 0; i < n_; ++i) {
      for (int j = 0; j < n_; ++j) {
        if (i != j && classes_[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] >= floor) {
          adjacency[static_cast<std::size_t>(i)] |= bitOf(j);
        }
      }
    }
    return adjacency;
  }

 private:
  int n_;
  std::array<std::array<LinkClass, kMaxGpus>, kMaxGpus> classes_{};
};

// Sets of k GPUs in which every pair is adjacent (cliques of the adjacency), among `members`.
// Where the adjacency restricted to the members is an equivalence (every connected group a
// clique: NVSwitch, PCIe switch trees, one link class everywhere) the answers are arithmetic;
// otherwise (a cube mesh) an exact search, memoised over subsets, with a work allowance that only
// more than 8 GPUs without that structure can exhaust.
class CliqueSets {
 public:
  CliqueSets(const Adjacency& adjacency, int gpuCount, int k)
      : adjacency_(adjacency), n_(gpuCount), k_(k) {}

  // The most disjoint k-cliques among `members`.
  int maxDisjoint(GpuMask members) {
    if (k_ == 1) return gpuCountOf(members);
    if (const auto groups = cliqueGroups(members)) {
      int total = 0;
      for (const GpuMask group : *groups)
        total += gpuCountOf(group) / k_;
      return total;
    }
    const std::size_t states = std::size_t{1} << n_;
    if (states <= smallMemo_.size()) {
      std::fill_n(smallMemo_.begin(), states, std::int8_t{-1});
      memo_ = smallMemo_.data();
    } else {
      largeMemo_.assign(states, -1);
      memo_ = largeMemo_.data();
    }
    return solve(members);
  }

  // The members that lie in some k-clique of members.
  GpuMask covered(GpuMask members) {
    if (k_ == 1) return members;
    if (const auto groups = cliqueGroups(members)) {
      GpuMask out = 0;
      for (const GpuMask group : *groups) {
        if (gpuCountOf(group) >= k_) out |= group;
      }
      return out;
    }
    GpuMask out = 0;
    for (GpuMask rest = members; rest != 0; rest &= rest - 1) {
      const int gpu = std::countr_zero(rest);
      if ((out & bitOf(gpu)) != 0) continue;
      GpuMask found = 0;
      forEachCliqueWith(gpu, members & ~bitOf(gpu), [&](GpuMask clique) {
        found = clique;
        return false;
      });
      out |= found;
    }
    return out;
  }

  bool approximate() const noexcept { return steps_ > kAllowance; }

 private:
  static constexpr long kAllowance = 200'000;

  struct Groups {
    std::array<GpuMask, kMaxGpus> masks{};
    int count = 0;
    const GpuMask* begin() const noexcept { return masks.data(); }
    const GpuMask* end() const noexcept { return masks.data() + count; }
  };

  // The members' groups when adjacency among them is transitive (each group a clique); nullopt
  // otherwise.
  std::optional<Groups> cliqueGroups(GpuMask members) const {
    Groups groups;
    GpuMask seen = 0;
    for (GpuMask rest = members; rest != 0; rest &= rest - 1) {
      const int gpu = std::countr_zero(rest);
      const GpuMask closed = (adjacency_[static_cast<std::size_t>(gpu)] & members) | bitOf(gpu);
      if ((seen & bitOf(gpu)) != 0) continue;
      for (GpuMask peers = closed; peers != 0; peers &= peers - 1) {
        const int peer = std::countr_zero(peers);
        if (((adjacency_[static_cast<std::size_t>(peer)] & members) | bitOf(peer)) != closed) {
          return std::nullopt;
        }
      }
      seen |= closed;
      groups.masks[static_cast<std::size_t>(groups.count++)] = closed;
    }
    return groups;
  }

  // Calls visit(clique) for every k-clique made of `gpu` and k - 1 of `others` (all adjacent to
  // it), until visit returns false or the allowance is spent.
  template <class Visit>
  void forEachCliqueWith(int gpu, GpuMask others, Visit&& visit) {
    extend(bitOf(gpu), 1, others & adjacency_[static_cast<std::size_t>(gpu)], visit);
  }

  template <class Visit>
  bool extend(GpuMask clique, int size, GpuMask candidates, Visit& visit) {
    if (size == k_) return visit(clique);
    while (candidates != 0 && gpuCountOf(candidates) >= k_ - size) {
      if (++steps_ > kAllowance) return false;
      const int next = std::countr_zero(candidates);
      candidates &= candidates - 1;
      if (!extend(clique | bitOf(next), size + 1,
                  candidates & adjacency_[static_cast<std::size_t>(next)], visit)) {
        return false;
      }
    }
    return true;
  }

  // The most disjoint k-cliques in `members`: its lowest GPU is either in none of them or in one
  // of the cliques it forms with higher members.
  int solve(GpuMask members) {
    const int bound = gpuCountOf(members) / k_;
    if (bound == 0) return 0;
    std::int8_t& known = memo_[members];
    if (known >= 0) return known;
    const int lowest = std::countr_zero(members);
    const GpuMask rest = members & ~bitOf(lowest);
    int best = solve(rest);
    if (best < bound) {
      forEachCliqueWith(lowest, rest, [&](GpuMask clique) {
        best = std::max(best, 1 + solve(members & ~clique));
        return best < bound;
      });
    }
    known = static_cast<std::int8_t>(best);
    return best;
  }

  const Adjacency& adjacency_;
  int n_;
  int k_;
  long steps_ = 0;
  // The most disjoint cliques per subset of the node's GPUs (-1: not known yet): inline up to 8
  // GPUs, on the heap above.
  std::int8_t* memo_ = nullptr;
  std::array<std::int8_t, 256> smallMemo_;
  std::vector<std::int8_t> largeMemo_;
};

// Free slices of MIG-enabled GPUs that no free legal placement of a profile the node has an
// instance of covers.
int strandedMigSlices(const NodeState& state) {
  if (!state.migProduct) return 0;
  const MigProduct& product = *state.migProduct;
  std::vector<const MigProfile*> inUse;
  for (const auto& instances : state.migInstances) {
    for (const MigInstance& instance : instances) {
      const MigProfile* profile = product.findByCode(instance.profileCode);
      if (profile && std::find(inUse.begin(), inUse.end(), profile) == inUse.end()) {
        inUse.push_back(profile);
      }
    }
  }
  if (inUse.empty()) return 0;  // no profile to judge the free slices by
  int stranded = 0;
  for (std::size_t gpu = 0; gpu < state.migUsable.size(); ++gpu) {
    if (!state.migUsable[gpu]) continue;
    const SliceMask occupied = state.migOccupied[gpu];
    SliceMask reachable = 0;
    for (const MigProfile* profile : inUse) {
      for (const int start : profile->starts) {
        if (start + profile->slices <= kMigMemorySlices &&
            placementFree(occupied, start, profile->slices)) {
          reachable = static_cast<SliceMask>(reachable | sliceMask(start, profile->slices));
        }
      }
    }
    const auto free = static_cast<SliceMask>(~occupied);
    stranded += std::popcount(static_cast<unsigned>(free & ~reachable & 0xFFu));
  }
  return stranded;
}

}  // namespace

NodeHealth nodeHealth(const NodeState& state) {
  NodeHealth health;
  health.freeGpus = state.freeCount;
  const int n = std::min(state.gpuCount, kMaxGpus);
  const PairClasses classes(state.topology, n);
  const Adjacency nvlink = classes.atLeast(LinkClass::kNvlink);
  for (std::size_t i = 0; i < kHealthSizeCount; ++i) {
    const int k = kHealthSizes[i];
    if (k > state.usableCount || state.capacity == nullptr ||
        static_cast<std::size_t>(k) >= state.capacity->size()) {
      continue;  // can never host k: contributes nothing to any k figure
    }
    health.packable[i] = state.freeCount;
    CliqueSets nvlinkSets(nvlink, n, k);
    health.nvlinkSets[i] = nvlinkSets.maxDisjoint(state.freeMask);
    if (k >= 2 && nvlinkSets.covered(state.usableMask) != 0) {
      health.stranded[i] = gpuCountOf(state.freeMask & ~nvlinkSets.covered(state.freeMask));
    }
    health.approximate = health.approximate || nvlinkSets.approximate();
    const LinkClass best = (*state.capacity)[static_cast<std::size_t>(k)].devicePluginWeakest;
    if (best == LinkClass::kNvlink) {
      health.hostable[i] = health.nvlinkSets[i];  // the same sets
      continue;
    }
    const Adjacency atBest = classes.atLeast(best);
    CliqueSets bestSets(atBest, n, k);
    health.hostable[i] = bestSets.maxDisjoint(state.freeMask);
    health.approximate = health.approximate || bestSets.approximate();
  }
  health.strandedMigSlices = strandedMigSlices(state);
  for (const int size : kFragmentationSizes) {
    health.unusableGpus +=
        unusableFreeGpus(state, size, state.freeCount, state.largestNvlinkClique);
  }
  for (int k = 2; k <= kMaxOfferedGpus && k <= state.freeCount; ++k) {
    const GpuPick& pick = state.devicePluginPicks[static_cast<std::size_t>(k)];
    health.offered[static_cast<std::size_t>(k)] = SetQuality{pick.weakest, pick.bandwidthGBps};
  }
  return health;
}

namespace {

// Per k, the highest bandwidth and the best class of either.
void keepBest(OfferedSets& best, const OfferedSets& offered) noexcept {
  for (std::size_t k = 0; k < best.size(); ++k) {
    best[k].bandwidthGBps = std::max(best[k].bandwidthGBps, offered[k].bandwidthGBps);
    best[k].weakest = std::max(best[k].weakest, offered[k].weakest);
  }
}

}  // namespace

void HealthTotals::add(const NodeHealth& node) noexcept {
  ++nodes;
  approximateNodes += node.approximate ? 1 : 0;
  addCounts(node);
  keepBest(bestOffered, node.offered);
}

void HealthTotals::add(const HealthTotals& other) noexcept {
  nodes += other.nodes;
  approximateNodes += other.approximateNodes;
  addCounts(other);
  keepBest(bestOffered, other.bestOffered);
}

}  // namespace gte
