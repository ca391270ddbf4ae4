#pragma once
// The small synthetic trace the simulator tests replay (openb pod-list format).
#include <fstream>
#include <sstream>
#include <string>

namespace gte::sim::testing {

inline std::string syntheticTraceText() {
  std::ifstream in(std::string(GTE_TEST_DATA_DIR) + "/sim/synthetic-pods.csv");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace gte::sim::testing
