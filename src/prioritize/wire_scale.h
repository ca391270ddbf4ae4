#pragma once
// Maps one prioritize request's candidates onto kube-scheduler's 0..10 extender scale, so that the
// few wire steps separate the candidates this pod actually has instead of fixed bands of the
// 0..100 score (docs/scoring.md, "Wire scale"):
//   - link quality first: when the fitting candidates differ in the link class of the GPUs the pod
//     would get, those with the best class get 2..10 and every other candidate 0. The gap of at
//     least 2 steps (240 points at the chart's weight 12) exceeds the 200 points kube-scheduler's
//     NodeResourcesFit and BalancedAllocation can add, so a pod gets a weaker link class only when
//     no feasible node offers a better one;
//   - min-max inside that group: the lowest score maps to the bottom of the range, the highest to
//     10, linearly, rounded; equal scores get equal wire scores, and a higher score never gets a
//     lower wire score.
// Candidates that do not fit get 0. Pure.
#include <span>
#include <vector>

namespace gte {

inline constexpr int kMaxExtenderScore = 10;  // kube-scheduler's MaxExtenderPriority

struct RankedScore {
  bool fits = false;
  int linkQuality = -1;  // the linkQuality term (0..1200), -1 when it does not apply
  int score = 0;         // 0..100
};

// linkFirst false: one min-max over all fitting candidates (the link class counts only through
// the score).
std::vector<int> wireScores(std::span<const RankedScore> candidates, bool linkFirst = true);

}  // namespace gte
