#pragma once
// The GPU counts the preemption benches fill nodes with: the openb trace's GPU pods of 1, 2, 4 or
// 8 GPUs (other counts skipped), or without a trace the openb multigpu50 list's mix.
#include <string>
#include <vector>

namespace gte::bench {

// One entry per pod, to draw from uniformly. An empty `tracePath` gives the multigpu50 mix; a
// trace that does not read ends the program with status 2 and a message naming `program`.
std::vector<int> openbGpuCounts(const std::string& tracePath, const char* program);

}  // namespace gte::bench
