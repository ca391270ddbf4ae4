#include "topology/best_set.h"

#include <array>

#include "topology/twin_gpus.h"

namespace gte {
namespace {

class BestSetSearch {
 public:
  BestSetSearch(const PairTable& table, GpuMask candidates, int k)
      : table_(table), k_(k), count_(0) {
    for (GpuMask rest = candidates; rest != 0; rest &= rest - 1) {
      order_[static_cast<std::size_t>(count_++)] = std::countr_zero(rest);
    }
    // A set holding the later of two twins but not the earlier one scores the same as the set
    // with the two swapped, which comes first and wins the tie; candidates are added in index
    // order, so an earlier twin not in the set was passed over, and the later one is skipped.
    earlierTwins_ = earlierTwins(table.score, candidates, candidates);
  }

  GpuSet run() {
    if (k_ <= 0 || k_ > count_) {
      return {};
    }
    extend(0, 0, 0, 0);
    return best_;
  }

 private:
  // Pairs a set of `size` GPUs has; bounds the score the rest of a partial set can add.
  static int pairs(int size) { return size * (size - 1) / 2; }

  void extend(int from, int size, GpuMask set, int score) {
    if (size == k_) {
      if (best_.gpus == 0 || score > best_.score) {
        best_ = {set, score};
      }
      return;
    }
    for (int at = from; at <= count_ - (k_ - size); ++at) {
      const int gpu = order_[static_cast<std::size_t>(at)];
      if ((earlierTwins_[static_cast<std::size_t>(gpu)] & ~set) != 0) {
        continue;  // the set with its earlier twin instead scores the same and comes first
      }
      int added = 0;
      for (GpuMask rest = set; rest != 0; rest &= rest - 1) {
        added += table_.score[static_cast<std::size_t>(gpu)]
                             [static_cast<std::size_t>(std::countr_zero(rest))];
      }
      const int nextScore = score + added;
      const int optimistic = nextScore + table_.maxScore * (pairs(k_) - pairs(size + 1));
      if (best_.gpus != 0 && optimistic <= best_.score) {
        continue;  // even perfect pairs from here on could only tie, and ties keep the first
      }
      extend(at + 1, size + 1, set | bitOf(gpu), nextScore);
    }
  }

  const PairTable& table_;
  const int k_;
  int count_;
  std::array<int, kMaxGpus> order_{};
  std::array<GpuMask, kMaxGpus> earlierTwins_{};  // per GPU, its twins of lower index
  GpuSet best_;
};

}  // namespace

GpuSet findBestSet(const PairTable& table, GpuMask candidates, int k) {
  return BestSetSearch(table, candidates, k).run();
}

}  // namespace gte
