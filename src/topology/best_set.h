#pragma once
// The best k-GPU set among candidates by the policy's pair scores: exact, by depth-first search
// over the candidates in index order with a branch-and-bound cut (the partial score plus the best
// pair score times the pairs still to add cannot beat the incumbent). Ties keep the
// lexicographically first set, so results are deterministic.
#include "topology/pair_table.h"

namespace gte {

struct GpuSet {
  GpuMask gpus = 0;  // 0 when no set of that size exists
  int score = 0;     // sum of policy pair scores
};

GpuSet findBestSet(const PairTable& table, GpuMask candidates, int k);

}  // namespace gte
