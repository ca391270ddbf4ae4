#include "openb_gpu_counts.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "sim/openb_csv.h"

namespace gte::bench {

std::vector<int> openbGpuCounts(const std::string& tracePath, const char* program) {
  std::vector<int> out;
  if (tracePath.empty()) {
    // The openb multigpu50 list's GPU pods: 6,989 of 1 GPU, 222 of 2, 206 of 4, 556 of 8.
    out.insert(out.end(), 6989, 1);
    out.insert(out.end(), 222, 2);
    out.insert(out.end(), 206, 4);
    out.insert(out.end(), 556, 8);
    return out;
  }
  std::ifstream in(tracePath);
  std::stringstream text;
  text << in.rdbuf();
  auto pods = sim::parseOpenbPods(text.str());
  if (!pods.ok()) {
    std::fprintf(stderr, "%s: %s: %s\n", program, tracePath.c_str(), pods.error().message.c_str());
    std::exit(2);
  }
  for (const sim::SimPod& p : *pods) {
    if (p.gpus == 1 || p.gpus == 2 || p.gpus == 4 || p.gpus == 8) out.push_back(p.gpus);
  }
  return out;
}

}  // namespace gte::bench
