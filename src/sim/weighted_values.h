#pragma once
// A discrete distribution written as "<value>:<weight>,...", e.g. "1:50,2:15,4:10" (GPUs per pod,
// members per group): the form every mix option of the simulator takes.
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"

namespace gte::sim {

using WeightedValues = std::vector<std::pair<int, int>>;  // (value, relative weight)

// Values must lie in [low, high], weights be non-negative with a positive sum; `what` names the
// value in errors ("gpus", "members").
Result<WeightedValues> parseWeightedValues(std::string_view text, int low, int high,
                                           std::string_view what);

// Σ value × weight / Σ weight; 0 for no weight.
double weightedMean(const WeightedValues& values);

}  // namespace gte::sim
