#include "topology/device_plugin_pick.h"

#include <algorithm>
#include <array>
#include <climits>
#include <functional>
#include <optional>
#include <vector>

#include "topology/twin_gpus.h"

namespace gte {
namespace {

constexpr int kUnvisited = INT_MIN;
constexpr int kInfeasible = INT_MIN + 1;

// Positions 0..real-1 are the available GPUs in index order; positions real..real+padding-1 are
// upstream's nil padding devices. A state is the mask of real positions still unassigned plus one
// bit for "padding still unassigned" (a group holds none or all of the padding).
class PartitionSearch {
 public:
  PartitionSearch(const PairTable& table, GpuMask available, GpuMask required, int size)
      : size_(size) {
    for (GpuMask rest = available; rest != 0; rest &= rest - 1) {
      const int gpu = std::countr_zero(rest);
      if ((required & bitOf(gpu)) != 0) {
        required_ |= bitOf(real_);
      }
      gpuAt_[static_cast<std::size_t>(real_++)] = gpu;
    }
    padding_ = (size_ - real_ % size_) % size_;
    for (int a = 0; a < real_; ++a) {
      for (int b = 0; b < real_; ++b) {
        positionScore_[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] =
            a == b
                ? 0
                : table.pluginScore[static_cast<std::size_t>(gpuAt_[static_cast<std::size_t>(a)])]
                                   [static_cast<std::size_t>(gpuAt_[static_cast<std::size_t>(b)])];
      }
    }
  }

  GpuMask pick(PickBudget* budget) {
    const unsigned full = allGpus(real_) | (padding_ > 0 ? padBit() : 0u);
    if (real_ > kMemoOnlyUpTo) {
      const bool limited = budget != nullptr && real_ > PickBudget::kExactWithoutBudgetUpTo;
      const long allowance =
          limited ? std::clamp(budget->groups, kLeastAllowance, kBoundedBudget) : kBoundedBudget;
      const std::optional<GpuMask> picked = pickBounded(full, allowance);
      if (limited) {
        budget->groups = std::max(0L, budget->groups - (allowance - std::max(0L, budget_)));
      }
      if (picked) {
        return *picked;
      }
      if (limited) {
        // The memoised search below would take tens of milliseconds: take the best found.
        budget->approximate = true;
        return incumbentScore_ == kInfeasible ? lowestGroup() : chosenFromIncumbent();
      }
    }
    memo_.assign(std::size_t{1} << static_cast<unsigned>(real_ + 1), kUnvisited);
    if (best(full) == kInfeasible) {
      return 0;
    }
    GroupChoice choice;
    for (unsigned state = full; state != 0;) {
      const Group group = firstOptimalGroup(state);
      if (group.real == 0) {
        break;  // cannot happen for a feasible state; guards the loop against a broken invariant
      }
      choice.consider(group, required_);
      state = without(state, group);
    }
    return toGpus(choice.chosen);
  }

 private:
  struct Group {
    GpuMask real = 0;
    bool padded = false;
    int score = 0;
  };

  // Walking the first optimal partition in enumeration order, keeps its best padding-free group
  // that holds `required` (strictly better replaces: the first wins ties, as upstream).
  struct GroupChoice {
    GpuMask chosen = 0;
    int chosenScore = 0;
    void consider(const Group& group, GpuMask required) {
      if (!group.padded && (group.real & required) == required &&
          (chosen == 0 || group.score > chosenScore)) {
        chosen = group.real;
        chosenScore = group.score;
      }
    }
  };

  // Up to 8 GPUs the memoised search takes tens of microseconds; above, its subsets number up to
  // 2^17 and it took 20-45 ms per 16-GPU node (all sizes), so those try the bounded search first.
  static constexpr int kMemoOnlyUpTo = 8;
  // Groups the bounded search may try, without a caller's budget, before it gives up for the
  // memoised one (~10 ms). The DGX-2's PCIe tree needs about 1,000 (size 3) with the mirror cuts.
  static constexpr long kBoundedBudget = 100'000;
  // What a limited search always gets: enough to reach a first complete partition.
  static constexpr long kLeastAllowance = 64;

  // Depth-first over partitions in upstream's enumeration order, keeping the first best partition
  // found (a later one replaces it only when strictly better, so ties go to the earliest, as
  // upstream). A group is skipped when even the bound of what it leaves cannot beat the best
  // found; the answer is exact. Partitions of GPUs with a switch hierarchy are found and proven
  // best in a few thousand steps; nullopt when the budget runs out first.
  std::optional<GpuMask> pickBounded(unsigned full, long allowance) {
    rankPartners();
    earlierTwins_ = earlierTwins(positionScore_, allGpus(real_), allGpus(real_) & ~required_);
    findBlockSwaps();
    budget_ = allowance;
    if (!explore(full, 0, 0)) {
      return std::nullopt;
    }
    if (incumbentScore_ == kInfeasible) {
      return GpuMask{0};
    }
    return chosenFromIncumbent();
  }

  GpuMask chosenFromIncumbent() const {
    GroupChoice choice;
    for (int i = 0; i < incumbentGroups_; ++i) {
      choice.consider(incumbent_[static_cast<std::size_t>(i)], required_);
    }
    return toGpus(choice.chosen);
  }

  // `required` and then the lowest other positions: a deterministic answer for a search that
  // found no partition at all within its allowance.
  GpuMask lowestGroup() const {
    GpuMask group = required_;
    for (int at = 0; at < real_ && gpuCountOf(group) < size_; ++at) {
      group |= bitOf(at);
    }
    return toGpus(group);
  }

  // False when the budget ran out.
  bool explore(unsigned state, int partial, int depth) {
    if (state == 0) {
      if (partial > incumbentScore_) {
        incumbentScore_ = partial;
        incumbent_ = path_;
        incumbentGroups_ = depth;
      }
      return true;
    }
    bool withinBudget = true;
    forEachGroup(
        state,
        [&](const Group& group) {
          if (--budget_ < 0) {
            withinBudget = false;
            return true;
          }
          if (mirrorsEarlierGroup(group, state)) {
            return false;
          }
          const unsigned left = without(state, group);
          if (incumbentScore_ != kInfeasible &&
              partial + group.score + upperBound(left) <= incumbentScore_) {
            return false;
          }
          path_[static_cast<std::size_t>(depth)] = group;
          if (!explore(left, partial + group.score, depth + 1)) {
            withinBudget = false;
            return true;
          }
          return false;
        },
        /*cutMirrors=*/true);
    return withinBudget;
  }

  // Mirrors. Twins are two positions that score the same with every other position (GPUs on one
  // PCIe switch, as upstream sees a DGX-2), neither of them required. A group holding the later
  // twin but not the earlier one, which is still unassigned, mirrors the group with the two
  // swapped: that one comes first in enumeration order, and swapping the twins maps each partition
  // under this group onto one under it with the same score. A mirror can therefore only tie what
  // was found first, never replace it, and is skipped. The same holds for swapping two whole
  // blocks of positions (two PCIe switches under one bridge, two bridges under one CPU) when
  // neither block holds an assigned position or the lowest unassigned one (the swap keeps
  // everything before this group and the group's first member). forEachGroup cuts twin mirrors
  // and those of blocks lying one above the other while it builds a group (on a DGX-2 this halves
  // the choices per switch); this checks the other block swaps on a complete group. Two
  // same-size sets compare in enumeration order by the lowest position in only one of them.
  bool mirrorsEarlierGroup(const Group& group, unsigned state) const {
    const GpuMask realLeft = state & allGpus(real_);
    const GpuMask movable = realLeft & (realLeft - 1);
    for (const BlockSwap& swap : blockSwaps_) {
      const GpuMask both = swap.first | swap.second;
      if (swap.shift > 0 || (both & ~movable) != 0 || (group.real & both) == 0) {
        continue;
      }
      GpuMask image = group.real & ~both;
      for (GpuMask rest = group.real & both; rest != 0; rest &= rest - 1) {
        image |= bitOf(swap.image[static_cast<std::size_t>(std::countr_zero(rest))]);
      }
      const GpuMask differ = image ^ group.real;
      if (differ != 0 && (image & differ & (~differ + 1)) != 0) {
        return true;
      }
    }
    return false;
  }

  struct BlockSwap {
    GpuMask first = 0;
    GpuMask second = 0;
    std::array<int, kMaxGpus> image{};  // position -> its partner in the other block
    // When the second block is the first moved up by `shift` and lies wholly above it, the
    // mirror test can run while the group is built (cutsMirror); 0 when it cannot.
    int shift = 0;
  };

  // Pairs up blocks level by level: twins (single positions) first, then blocks made of a
  // swapped pair, as long as a swap keeps every pair score. On a PCIe tree this finds each
  // pair of sibling subtrees; blocks never hold a required position.
  void findBlockSwaps() {
    std::vector<GpuMask> blocks;
    for (int a = 0; a < real_; ++a) {
      if (((required_ >> a) & 1u) == 0) {
        blocks.push_back(bitOf(a));
      }
    }
    bool singles = true;
    while (blocks.size() >= 2) {
      std::vector<GpuMask> merged;
      std::vector<bool> used(blocks.size(), false);
      for (std::size_t i = 0; i < blocks.size(); ++i) {
        for (std::size_t j = i + 1; j < blocks.size() && !used[i]; ++j) {
          if (used[j] || gpuCountOf(blocks[i]) != gpuCountOf(blocks[j])) {
            continue;
          }
          if (singles) {
            // Single positions swap when they are twins, found already and cut apart.
            const auto later = static_cast<std::size_t>(std::countr_zero(blocks[j]));
            if ((earlierTwins_[later] & blocks[i]) == 0) {
              continue;
            }
          } else if (const BlockSwap swap = pairBlocks(blocks[i], blocks[j]); keepsScores(swap)) {
            blockSwaps_.push_back(swap);
          } else {
            continue;
          }
          used[i] = used[j] = true;
          merged.push_back(blocks[i] | blocks[j]);
        }
      }
      if (merged.empty()) {
        break;
      }
      blocks = std::move(merged);
      singles = false;
    }
  }

  BlockSwap pairBlocks(GpuMask first, GpuMask second) const {
    BlockSwap swap{first, second, {}};
    for (int at = 0; at < real_; ++at) {
      swap.image[static_cast<std::size_t>(at)] = at;
    }
    for (GpuMask a = first, b = second; a != 0; a &= a - 1, b &= b - 1) {
      const int from = std::countr_zero(a);
      const int to = std::countr_zero(b);
      swap.image[static_cast<std::size_t>(from)] = to;
      swap.image[static_cast<std::size_t>(to)] = from;
    }
    const int shift = std::countr_zero(second) - std::countr_zero(first);
    if (shift > 0 && (first << static_cast<unsigned>(shift)) == second &&
        static_cast<int>(std::bit_width(first)) <= std::countr_zero(second)) {
      swap.shift = shift;
    }
    return swap;
  }

  bool keepsScores(const BlockSwap& swap) const {
    for (int a = 0; a < real_; ++a) {
      for (int b = 0; b < real_; ++b) {
        const auto ia = static_cast<std::size_t>(swap.image[static_cast<std::size_t>(a)]);
        const auto ib = static_cast<std::size_t>(swap.image[static_cast<std::size_t>(b)]);
        if (positionScore_[ia][ib] !=
            positionScore_[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)]) {
          return false;
        }
      }
    }
    return true;
  }

  // The distinct pair scores of the available GPUs (none below 0), best first, and per position
  // and score the positions it scores that with: what upperBound counts with.
  void rankPartners() {
    for (int a = 0; a < real_; ++a) {
      for (int b = 0; b < real_; ++b) {
        if (a != b &&
            std::find(levels_.begin(), levels_.end(), clampedScore(a, b)) == levels_.end()) {
          levels_.push_back(clampedScore(a, b));
        }
      }
    }
    std::sort(levels_.begin(), levels_.end(), std::greater<>());
    partnersAt_.assign(static_cast<std::size_t>(real_) * levels_.size(), 0);
    for (int a = 0; a < real_; ++a) {
      for (int b = 0; b < real_; ++b) {
        if (a != b) {
          const auto level = static_cast<std::size_t>(
              std::find(levels_.begin(), levels_.end(), clampedScore(a, b)) - levels_.begin());
          partnersAt_[static_cast<std::size_t>(a) * levels_.size() + level] |= bitOf(b);
        }
      }
    }
  }

  int clampedScore(int a, int b) const {
    return std::max(0, positionScore_[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)]);
  }

  // No partition of `state` scores more: twice a group's score is the sum over its members of
  // their scores with the other members, at most each member's size-1 best partners still in
  // `state` (padding partners score 0, and no score counts below 0).
  int upperBound(unsigned state) const {
    const GpuMask real = state & allGpus(real_);
    int twice = 0;
    for (GpuMask rest = real; rest != 0; rest &= rest - 1) {
      const auto a = static_cast<std::size_t>(std::countr_zero(rest));
      int wanted = size_ - 1;
      for (std::size_t level = 0; level < levels_.size() && wanted > 0; ++level) {
        const int there =
            std::min(wanted, gpuCountOf(partnersAt_[a * levels_.size() + level] & real));
        twice += there * levels_[level];
        wanted -= there;
      }
    }
    return twice / 2;
  }

  unsigned padBit() const { return 1u << static_cast<unsigned>(real_); }

  GpuMask toGpus(GpuMask positions) const {
    GpuMask gpus = 0;
    for (GpuMask rest = positions; rest != 0; rest &= rest - 1) {
      gpus |= bitOf(gpuAt_[static_cast<std::size_t>(std::countr_zero(rest))]);
    }
    return gpus;
  }

  // A group may not split `required`: it holds all of it (and no padding) or none of it.
  bool respectsRequired(GpuMask real, bool padded) const {
    const GpuMask inside = real & required_;
    return inside == 0 || (inside == required_ && !padded);
  }

  // Calls visit(group) for each valid group holding the lowest remaining position, in upstream's
  // order: the other members as combinations of the remaining positions in lexicographic order.
  // Padding positions are the highest and a group takes all or none of them, so they act as one
  // block after every real position. Stops when visit returns true.
  // With cutMirrors, a member that would make every group that follows a mirror (an earlier twin
  // still unassigned was passed over, or likewise for a block below; see mirrorsEarlierGroup) is
  // never added: cutting while the group is still being built skips most of the enumeration.
  template <typename Visit>
  void forEachGroup(unsigned state, Visit&& visit, bool cutMirrors = false) const {
    const GpuMask realLeft = state & allGpus(real_);
    if (realLeft == 0) {
      return;  // only padding left: cannot form a group (padding never fills a group alone)
    }
    GroupWalk walk;
    if (cutMirrors) {
      walk.twinGuard = realLeft;
      const GpuMask movable = realLeft & (realLeft - 1);
      for (const BlockSwap& swap : blockSwaps_) {
        if (swap.shift > 0 && ((swap.first | swap.second) & ~movable) == 0) {
          walk.shiftedSwaps[static_cast<std::size_t>(walk.shiftedCount++)] = &swap;
        }
      }
    }
    walk.first = std::countr_zero(realLeft);
    for (GpuMask rest = realLeft & (realLeft - 1); rest != 0; rest &= rest - 1) {
      walk.candidates[static_cast<std::size_t>(walk.count++)] = std::countr_zero(rest);
    }
    walk.padLeft = (state & padBit()) != 0;
    (void)extendGroup(walk, 0, 1, bitOf(walk.first), 0, visit);
  }

  struct GroupWalk {
    int first = 0;
    std::array<int, kMaxGpus> candidates{};
    int count = 0;
    bool padLeft = false;
    GpuMask twinGuard = 0;  // the unassigned positions when mirrors are cut, else none
    std::array<const BlockSwap*, kMaxGpus> shiftedSwaps{};  // whose mirrors are cut while building
    int shiftedCount = 0;
  };

  // Adding `pos` (from the second block) to `real` makes every group that follows a mirror of the
  // swap: the positions below `pos` in both blocks match pairwise and pos's partner, lower, was
  // passed over, so the lowest position where the group and its image differ is in the image.
  static bool cutsMirror(const BlockSwap& swap, GpuMask real, int pos) {
    const auto shift = static_cast<unsigned>(swap.shift);
    if ((swap.second & bitOf(pos)) == 0 || (real & bitOf(pos - swap.shift)) != 0) {
      return false;
    }
    const GpuMask belowSecond = swap.second & (bitOf(pos) - 1u);
    return ((real & (belowSecond >> shift)) << shift) == (real & belowSecond);
  }

  bool cutsAnyMirror(const GroupWalk& walk, GpuMask real, int pos) const {
    if ((earlierTwins_[static_cast<std::size_t>(pos)] & walk.twinGuard & ~real) != 0) {
      return true;
    }
    for (int i = 0; i < walk.shiftedCount; ++i) {
      if (cutsMirror(*walk.shiftedSwaps[static_cast<std::size_t>(i)], real, pos)) {
        return true;
      }
    }
    return false;
  }

  // Depth-first over candidates in increasing order (= lexicographic combinations); the score
  // grows by the new member's pairs with those already chosen.
  template <typename Visit>
  bool extendGroup(const GroupWalk& walk, int from, int members, GpuMask real, int score,
                   Visit& visit) const {
    if (members == size_) {
      return respectsRequired(real, false) && visit(Group{real, false, score});
    }
    // A group completes with real members only, or with exactly size - padding real members and
    // the padding block; stop when this candidate can lead to neither (enumeration order kept).
    const bool padCanComplete = walk.padLeft && padding_ > 0 && members + 1 + padding_ <= size_;
    for (int at = from; at < walk.count; ++at) {
      if (members + (walk.count - at) < size_ && !padCanComplete) {
        break;
      }
      const int pos = walk.candidates[static_cast<std::size_t>(at)];
      if (walk.twinGuard != 0 && cutsAnyMirror(walk, real, pos)) {
        continue;
      }
      int added = 0;
      for (GpuMask rest = real; rest != 0; rest &= rest - 1) {
        added += positionScore_[static_cast<std::size_t>(pos)]
                               [static_cast<std::size_t>(std::countr_zero(rest))];
      }
      if (extendGroup(walk, at + 1, members + 1, real | bitOf(pos), score + added, visit)) {
        return true;
      }
    }
    // The padding block comes after every real candidate and completes the group exactly.
    if (walk.padLeft && padding_ > 0 && members + padding_ == size_) {
      return respectsRequired(real, true) && visit(Group{real, true, score});
    }
    return false;
  }

  unsigned without(unsigned state, const Group& group) const {
    return state & ~(group.real | (group.padded ? padBit() : 0u));
  }

  // Best total score of partitioning `state`, or kInfeasible.
  int best(unsigned state) {
    if (state == 0) {
      return 0;  // groups never split `required`, so a complete partition placed it whole
    }
    int& slot = memo_[state];
    if (slot != kUnvisited) {
      return slot;
    }
    int bestScore = kInfeasible;
    forEachGroup(state, [&](const Group& group) {
      const int rest = best(without(state, group));
      if (rest != kInfeasible && group.score + rest > bestScore) {
        bestScore = group.score + rest;
      }
      return false;
    });
    slot = bestScore;
    return bestScore;
  }

  Group firstOptimalGroup(unsigned state) {
    const int target = best(state);
    Group found;
    forEachGroup(state, [&](const Group& group) {
      const int rest = best(without(state, group));
      if (rest != kInfeasible && group.score + rest == target) {
        found = group;
        return true;
      }
      return false;
    });
    return found;
  }

  const int size_;
  int real_ = 0;
  int padding_ = 0;
  GpuMask required_ = 0;
  std::array<int, kMaxGpus> gpuAt_{};
  std::array<std::array<int, kMaxGpus>, kMaxGpus> positionScore_{};
  std::vector<int> memo_;
  // The bounded search.
  std::vector<int> levels_;
  std::vector<GpuMask> partnersAt_;               // [position * levels + level]
  std::array<GpuMask, kMaxGpus> earlierTwins_{};  // per position, its twins before it
  std::vector<BlockSwap> blockSwaps_;             // blocks of two or more positions
  std::array<Group, kMaxGpus> path_{};
  std::array<Group, kMaxGpus> incumbent_{};
  int incumbentGroups_ = 0;
  int incumbentScore_ = kInfeasible;
  long budget_ = 0;
};

}  // namespace

GpuMask predictDevicePluginPick(const PairTable& table, GpuMask available, GpuMask required,
                                int size, PickBudget* budget) {
  const int availableCount = gpuCountOf(available);
  if (size <= 0 || availableCount < size || gpuCountOf(required) > size ||
      (required & ~available) != 0) {
    return 0;
  }
  if (size == 1) {
    // Upstream's size-1 shortcut: the first available device that holds `required`.
    return required != 0 ? required : (available & (~available + 1));
  }
  return PartitionSearch(table, available, required, size).pick(budget);
}

}  // namespace gte
