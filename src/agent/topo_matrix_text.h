#pragma once
// Reads `nvidia-smi topo -m` (best path per pair) and `nvidia-smi topo -mp` (PCIe path only).
// Handles every layout seen in real captures: tabs or spaces, a header that starts with a tab,
// NIC columns and rows under any name (NIC0, mlx5_0, mlx4_0), the optional "CPU Affinity",
// "NUMA Affinity" and "GPU NUMA ID" columns, legend blocks (current, older "switch" wording,
// K80-era `SOC`), `NIC Legend:` blocks and a command line echoed above the matrix. Rejected with
// the line number: missing GPU rows, rows cut short (too few cells or an ellipsis), unknown cells,
// a diagonal that is not `X`, asymmetric pairs, `NV#` in a PCIe-only matrix.
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "policy/link_class.h"

namespace gte::agent {

enum class MatrixKind { kBestPath, kPcieOnly };

struct TopoMatrixText {
  int gpuCount = 0;
  std::vector<int> nvlinks;     // per pair (labels-v1 order): the # of NV#, else 0
  std::vector<PcieLevel> pcie;  // per pair: the level shown, kUnknown where NV# hides it
  std::vector<int> numa;        // per GPU: the "NUMA Affinity" column, -1 unknown
  std::vector<int> rowLines;    // per GPU: the line its row is on (for later errors)
  int headerLine = 0;
};

// Errors carry the line: "7: GPU4 row has 9 cells, want at least 10 (partial capture)".
Result<TopoMatrixText> parseTopoMatrix(std::string_view text, MatrixKind kind);

}  // namespace gte::agent
