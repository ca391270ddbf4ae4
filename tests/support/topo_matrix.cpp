#include "support/topo_matrix.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <vector>

#include "model/gpu_request.h"
#include "topology/gpu_topology.h"

namespace gte::testing {
namespace {

std::vector<std::string> splitWords(std::string_view line) {
  std::vector<std::string> words;
  std::istringstream in{std::string(line)};
  for (std::string word; in >> word;) {
    words.push_back(word);
  }
  return words;
}

std::optional<int> gpuHeader(std::string_view word) {
  if (word.size() < 4 || word.substr(0, 3) != "GPU") {
    return std::nullopt;
  }
  int index = 0;
  for (char c : word.substr(3)) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    index = index * 10 + (c - '0');
  }
  return index;
}

char base36(int value) {
  return static_cast<char>(value < 10 ? '0' + value : 'a' + (value - 10));
}

// One matrix cell: NV# gives links (PCIe unknown), a PCIe level gives the level.
Status decodeCell(const std::string& cell, int row, int col, int& links, char& pci) {
  if (cell.rfind("NV", 0) == 0 && cell.size() > 2) {
    links = std::stoi(cell.substr(2));
    pci = 'U';
    if (links <= 0 || links > 35) {
      return invalidArgument("GPU" + std::to_string(row) + "/GPU" + std::to_string(col) +
                             ": NVLink count out of range: " + cell);
    }
    return Ok{};
  }
  links = 0;
  if (cell == "PIX") {
    pci = 'P';
  } else if (cell == "PXB") {
    pci = 'Q';
  } else if (cell == "PHB") {
    pci = 'H';
  } else if (cell == "NODE") {
    pci = 'N';
  } else if (cell == "SYS" || cell == "SOC") {
    pci = 'S';
  } else {
    return invalidArgument("GPU" + std::to_string(row) + "/GPU" + std::to_string(col) +
                           ": unknown cell '" + cell + "'");
  }
  return Ok{};
}

}  // namespace

Result<TopoMatrix> parseTopoMatrix(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line;
  std::vector<std::string> header;
  while (header.empty() && std::getline(in, line)) {
    header = splitWords(line);
  }
  int n = 0;
  while (n < static_cast<int>(header.size()) &&
         gpuHeader(header[static_cast<std::size_t>(n)]) == n) {
    ++n;
  }
  if (n == 0) {
    return invalidArgument("header names no GPU columns");
  }
  if (n > kMaxGpus) {
    return invalidArgument("capture has " + std::to_string(n) + " GPUs, more than supported");
  }
  // Extra device columns (NICs) sit between the GPUs and "CPU Affinity".
  int devices = 0;
  for (std::size_t i = static_cast<std::size_t>(n); i < header.size() && header[i] != "CPU"; ++i) {
    ++devices;
  }
  int numaColumn = -1;  // index among the row's words
  for (std::size_t i = 0; i + 1 < header.size(); ++i) {
    if (header[i] == "NUMA" && header[i + 1] == "Affinity") {
      // Row words: name, n GPU cells, NIC cells, CPU affinity (one word), NUMA affinity.
      numaColumn = 1 + n + devices + 1;
    }
  }
  const bool hasCpuAffinity =
      std::find(header.begin(), header.end(), std::string("CPU")) != header.end();

  std::vector<std::vector<std::string>> rows(static_cast<std::size_t>(n));
  int seen = 0;
  while (std::getline(in, line)) {
    const auto words = splitWords(line);
    if (words.empty()) {
      continue;
    }
    const auto row = gpuHeader(words[0]);
    if (!row) {
      continue;  // NIC rows and legends
    }
    if (*row >= n || !rows[static_cast<std::size_t>(*row)].empty()) {
      return invalidArgument("unexpected row " + words[0]);
    }
    const std::size_t minWords = 1 + static_cast<std::size_t>(n + devices) +
                                 (hasCpuAffinity ? 1 : 0) + (numaColumn >= 0 ? 1 : 0);
    if (words.size() < minWords || line.find("\xE2\x80\xA6") != std::string::npos) {
      return invalidArgument("row " + words[0] + " is truncated (partial capture)");
    }
    rows[static_cast<std::size_t>(*row)] = words;
    ++seen;
  }
  if (seen != n) {
    return invalidArgument("capture has " + std::to_string(seen) + " GPU rows, header names " +
                           std::to_string(n) + " GPUs (partial capture)");
  }

  TopoMatrix matrix;
  matrix.gpuCount = n;
  matrix.nvl.assign(static_cast<std::size_t>(pairCount(n)), '0');
  matrix.pci.assign(static_cast<std::size_t>(pairCount(n)), 'U');
  int firstLinks = -1;
  matrix.allPairsNvlinkEqual = n > 1;
  for (int i = 0; i < n; ++i) {
    const auto& row = rows[static_cast<std::size_t>(i)];
    if (row[static_cast<std::size_t>(i + 1)] != "X") {
      return invalidArgument("GPU" + std::to_string(i) + ": diagonal is not X");
    }
    for (int j = i + 1; j < n; ++j) {
      const std::string& cell = row[static_cast<std::size_t>(j + 1)];
      const std::string& mirror =
          rows[static_cast<std::size_t>(j)][static_cast<std::size_t>(i + 1)];
      if (cell != mirror) {
        return invalidArgument("GPU" + std::to_string(i) + "/GPU" + std::to_string(j) +
                               ": asymmetric cells " + cell + " and " + mirror);
      }
      int links = 0;
      char pci = 'U';
      if (auto status = decodeCell(cell, i, j, links, pci); !status.ok()) {
        return status.error();
      }
      const auto k = static_cast<std::size_t>(pairIndex(i, j, n));
      matrix.nvl[k] = base36(links);
      matrix.pci[k] = pci;
      matrix.anyNvlink = matrix.anyNvlink || links > 0;
      if (firstLinks < 0) {
        firstLinks = links;
      }
      matrix.allPairsNvlinkEqual = matrix.allPairsNvlinkEqual && links > 0 && links == firstLinks;
    }
    char numa = 'Z';
    if (numaColumn >= 0 && static_cast<std::size_t>(numaColumn) < row.size()) {
      const std::string& value = row[static_cast<std::size_t>(numaColumn)];
      if (value.size() == 1 && value[0] >= '0' && value[0] <= '9') {
        numa = value[0];
      }
    }
    matrix.numa.push_back(numa);
  }
  return matrix;
}

Result<NodeInfo> nodeFromTopoMatrix(std::string_view text, const TopoNodeOptions& options) {
  Result<TopoMatrix> matrix = parseTopoMatrix(text);
  if (!matrix.ok()) {
    return matrix.error();
  }
  const int n = matrix->gpuCount;
  NodeInfo node;
  node.name = options.name;
  const auto put = [&](const std::string& key, const std::string& value) {
    node.labels[options.prefix + key] = value;
  };
  put("v", "1");
  put("n", std::to_string(n));
  put("model", options.model);
  put("fabric", options.fabric.value_or(matrix->allPairsNvlinkEqual ? "nvsw"
                                        : matrix->anyNvlink         ? "mesh"
                                                                    : "none"));
  // Pair strings longer than 60 characters go into 60-character chunks.
  const auto putPairs = [&](const std::string& key, const std::string& value) {
    if (value.size() <= 60) {
      put(key, value);
      return;
    }
    for (std::size_t chunk = 0; chunk * 60 < value.size(); ++chunk) {
      put(key + std::to_string(chunk), value.substr(chunk * 60, 60));
    }
  };
  putPairs("nvl", matrix->nvl);
  putPairs("pci", matrix->pci);
  put("numa", matrix->numa);
  put("health", std::string(static_cast<std::size_t>(n), '1'));
  put("used", options.used.value_or(std::string(static_cast<std::size_t>(n), '0')));
  put("mig", std::string(static_cast<std::size_t>(n), 'n'));
  put("gen", options.gen);
  node.allocatable.set(std::string(kGpuResource), Quantity::fromUnits(n));
  return node;
}

Result<std::string> readTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error{ErrorCode::kNotFound, "cannot open " + path};
  }
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

}  // namespace gte::testing
