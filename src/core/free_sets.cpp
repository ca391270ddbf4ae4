#include "core/free_sets.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <vector>

#include "topology/pair_table.h"

namespace gte {
namespace {

// adjacency[i]: the GPUs j != i whose pair with i is at least some link class.
using Adjacency = std::array<GpuMask, kMaxGpus>;

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

}  // namespace

LinkSets::LinkSets(const NodeState& state)
    : n_(std::min(state.topology.gpuCount, kMaxGpus)), classes_{} {
  for (int i = 0; i < n_; ++i) {
    for (int j = i + 1; j < n_; ++j) {
      const LinkClass cls = state.topology.linkClass(i, j);
      classes_[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = cls;
      classes_[static_cast<std::size_t>(j)][static_cast<std::size_t>(i)] = cls;
    }
  }
}

int LinkSets::most(GpuMask members, LinkClass floor, int k) {
  CliqueSets sets(atLeast(floor), n_, k);
  const int most = sets.maxDisjoint(members);
  approximate_ = approximate_ || sets.approximate();
  return most;
}

GpuMask LinkSets::covered(GpuMask members, LinkClass floor, int k) {
  CliqueSets sets(atLeast(floor), n_, k);
  const GpuMask covered = sets.covered(members);
  approximate_ = approximate_ || sets.approximate();
  return covered;
}

const LinkSets::Adjacency& LinkSets::atLeast(LinkClass floor) {
  const auto at = static_cast<std::size_t>(floor);
  Adjacency& adjacency = adjacency_[at];
  if ((built_ >> at & 1U) != 0) return adjacency;
  built_ |= 1U << at;
  for (int i = 0; i < n_; ++i) {
    for (int j = 0; j < n_; ++j) {
      if (i != j && classes_[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] >= floor) {
        adjacency[static_cast<std::size_t>(i)] |= bitOf(j);
      }
    }
  }
  return adjacency;
}

int freeNvlinkSets(const NodeState& state, int k) {
  if (k <= 0) return 0;
  if (k == 1) return state.freeCount;
  if (!state.linksKnown() || state.freeCount < k) return 0;
  return LinkSets(state).most(state.freeMask, LinkClass::kNvlink, k);
}

FreeSetCounts freeNvlinkSets(const NodeState& state) {
  FreeSetCounts counts{};
  LinkSets sets(state);
  // Replicas of shared GPUs land where the device plugin's tenant count puts them, never on a
  // set (docs/sharing.md).
  const bool shared = state.sharesGpus;
  for (std::size_t i = 0; i < kFreeSetSizes.size(); ++i) {
    const int k = kFreeSetSizes[i];
    counts[i] = k == 1 ? state.freeCount
                : !state.linksKnown() || state.freeCount < k || shared
                    ? 0
                    : sets.most(state.freeMask, LinkClass::kNvlink, k);
  }
  return counts;
}

}  // namespace gte
