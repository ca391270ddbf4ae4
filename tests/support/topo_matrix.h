#pragma once
// Turns `nvidia-smi topo -m` output into a labels-v1 node, as the node agent would publish it.
// `topo -m` shows NV# instead of the PCIe level where NVLink exists, so those pairs get `U`
// (unknown) in `pci` unless the caller supplies the PCIe matrix; NUMA comes from the
// "NUMA Affinity" column when the capture has one, else `Z`. Partial captures (missing GPU rows,
// truncated rows) are errors, never guessed.
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "model/node_info.h"

namespace gte::testing {

struct TopoMatrix {
  int gpuCount = 0;
  std::string nvl;                   // labels-v1 pair string
  std::string pci;                   // labels-v1 pair string
  std::string numa;                  // one character per GPU
  bool allPairsNvlinkEqual = false;  // every pair shows the same NV# (NVSwitch-style)
  bool anyNvlink = false;
};

Result<TopoMatrix> parseTopoMatrix(std::string_view text);

struct TopoNodeOptions {
  std::string name = "node";
  std::string prefix = "gputopo.dev/";
  std::string model = "unknown-model";
  std::optional<std::string> fabric;  // default: nvsw when all pairs show equal NV#, mesh, none
  std::optional<std::string> used;    // default: all free
  std::string gen = "1764670000";
};

// Parses the capture and emits the labels (plus allocatable nvidia.com/gpu = n).
Result<NodeInfo> nodeFromTopoMatrix(std::string_view text, const TopoNodeOptions& options);

// Reads a whole file (fixtures in tests/data/topologies).
Result<std::string> readTextFile(const std::string& path);

}  // namespace gte::testing
