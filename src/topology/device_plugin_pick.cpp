#include "topology/device_plugin_pick.h"

#include <array>
#include <climits>
#include <vector>

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
    memo_.assign(std::size_t{1} << static_cast<unsigned>(real_ + 1), kUnvisited);
  }

  GpuMask pick() {
    const unsigned full = allGpus(real_) | (padding_ > 0 ? padBit() : 0u);
    if (best(full) == kInfeasible) {
      return 0;
    }
    // Walk the first optimal partition in enumeration order, keeping its best padding-free group
    // that holds `required` (strictly better replaces: the first wins ties, as upstream).
    GpuMask chosen = 0;
    int chosenScore = 0;
    for (unsigned state = full; state != 0;) {
      const Group group = firstOptimalGroup(state);
      if (group.real == 0) {
        break;  // cannot happen for a feasible state; guards the loop against a broken invariant
      }
      if (!group.padded && (group.real & required_) == required_ &&
          (chosen == 0 || group.score > chosenScore)) {
        chosen = group.real;
        chosenScore = group.score;
      }
      state &= ~(group.real | (group.padded ? padBit() : 0u));
    }
    return toGpus(chosen);
  }

 private:
  struct Group {
    GpuMask real = 0;
    bool padded = false;
    int score = 0;
  };

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
  template <typename Visit>
  void forEachGroup(unsigned state, Visit&& visit) const {
    const GpuMask realLeft = state & allGpus(real_);
    if (realLeft == 0) {
      return;  // only padding left: cannot form a group (padding never fills a group alone)
    }
    GroupWalk walk;
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
  };

  // Depth-first over candidates in increasing order (= lexicographic combinations); the score
  // grows by the new member's pairs with those already chosen.
  template <typename Visit>
  bool extendGroup(const GroupWalk& walk, int from, int members, GpuMask real, int score,
                   Visit& visit) const {
    if (members == size_) {
      return respectsRequired(real, false) && visit(Group{real, false, score});
    }
    const int padAvailable = walk.padLeft ? padding_ : 0;
    for (int at = from; at < walk.count; ++at) {
      if (members + (walk.count - at) + padAvailable < size_) {
        break;  // too few candidates left to complete the group
      }
      const int pos = walk.candidates[static_cast<std::size_t>(at)];
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
};

}  // namespace

GpuMask predictDevicePluginPick(const PairTable& table, GpuMask available, GpuMask required,
                                int size) {
  const int availableCount = gpuCountOf(available);
  if (size <= 0 || availableCount < size || gpuCountOf(required) > size ||
      (required & ~available) != 0) {
    return 0;
  }
  if (size == 1) {
    // Upstream's size-1 shortcut: the first available device that holds `required`.
    return required != 0 ? required : (available & (~available + 1));
  }
  return PartitionSearch(table, available, required, size).pick();
}

}  // namespace gte
