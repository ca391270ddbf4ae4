#include "agent/topo_matrix_text.h"

#include <charconv>
#include <optional>

#include "agent/capture_error.h"
#include "topology/gpu_topology.h"

namespace gte::agent {
namespace {

constexpr int kMaxLinks = 35;  // base-36 digit in `nvl`

std::vector<std::string_view> splitWords(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) {
      ++i;
    }
    const std::size_t begin = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') {
      ++i;
    }
    if (i > begin) {
      words.push_back(line.substr(begin, i - begin));
    }
  }
  return words;
}

std::optional<int> decimal(std::string_view text) {
  int value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 0) {
    return std::nullopt;
  }
  return value;
}

// "GPU12" -> 12.
std::optional<int> gpuName(std::string_view word) {
  if (word.size() < 4 || word.substr(0, 3) != "GPU") {
    return std::nullopt;
  }
  return decimal(word.substr(3));
}

// The columns after the GPU and NIC cells, each one word in a row.
struct TrailingColumns {
  int count = 0;
  int numaIndex = -1;  // among the trailing words
};

struct Header {
  int gpus = 0;
  int devices = 0;  // NIC columns
  TrailingColumns trailing;
};

Result<Header> parseHeader(const std::vector<std::string_view>& words, int line) {
  Header header;
  std::size_t i = 0;
  for (; i < words.size(); ++i) {
    const auto gpu = gpuName(words[i]);
    if (!gpu) {
      break;
    }
    if (*gpu != header.gpus) {
      return captureError(line, "header column " + std::string(words[i]) +
                                    " out of order, want GPU" + std::to_string(header.gpus));
    }
    ++header.gpus;
  }
  if (header.gpus > kMaxGpus) {
    return captureError(line, std::to_string(header.gpus) + " GPUs, at most 16 are supported");
  }
  // NIC columns run until the first trailing column name.
  for (; i < words.size() && words[i] != "CPU" && words[i] != "NUMA" && words[i] != "GPU"; ++i) {
    ++header.devices;
  }
  // "CPU Affinity", "NUMA Affinity", "GPU NUMA ID": one row word each.
  for (; i < words.size(); ++i) {
    const std::string_view word = words[i];
    if (word == "Affinity" || word == "ID") {
      continue;
    }
    if (word == "NUMA" && i > 0 && words[i - 1] == "GPU") {
      continue;  // "GPU NUMA ID" is one column
    }
    if (word == "NUMA" && i + 1 < words.size() && words[i + 1] == "Affinity") {
      header.trailing.numaIndex = header.trailing.count;
    }
    if (word != "CPU" && word != "NUMA" && word != "GPU") {
      return captureError(line, "unknown header column '" + std::string(word) + "'");
    }
    ++header.trailing.count;
  }
  return header;
}

struct Cell {
  int links = 0;
  PcieLevel level = PcieLevel::kUnknown;
};

std::optional<Cell> decodeCell(std::string_view cell) {
  if (cell.size() > 2 && cell.substr(0, 2) == "NV") {
    const auto links = decimal(cell.substr(2));
    if (!links || *links < 1 || *links > kMaxLinks) {
      return std::nullopt;
    }
    return Cell{*links, PcieLevel::kUnknown};
  }
  if (cell == "PIX") return Cell{0, PcieLevel::kPix};
  if (cell == "PXB") return Cell{0, PcieLevel::kPxb};
  if (cell == "PHB") return Cell{0, PcieLevel::kPhb};
  if (cell == "NODE") return Cell{0, PcieLevel::kNode};
  // K80-era drivers call the cross-socket path SOC.
  if (cell == "SYS" || cell == "SOC") return Cell{0, PcieLevel::kSys};
  return std::nullopt;
}

bool truncated(std::string_view line) {
  return line.find("\xE2\x80\xA6") != std::string_view::npos ||  // U+2026 ellipsis
         line.find("...") != std::string_view::npos;
}

struct Row {
  int line = 0;
  std::vector<std::string_view> words;
};

class MatrixParser {
 public:
  MatrixParser(std::string_view text, MatrixKind kind) : text_(text), kind_(kind) {}

  Result<TopoMatrixText> parse() {
    if (auto status = readLines(); !status.ok()) {
      return status.error();
    }
    return buildMatrix();
  }

 private:
  Status readLines() {
    int lineNumber = 0;
    bool inMatrix = false;
    int rowsSeen = 0;
    std::size_t pos = 0;
    while (pos <= text_.size()) {
      const std::size_t end = std::min(text_.find('\n', pos), text_.size());
      const std::string_view line = text_.substr(pos, end - pos);
      pos = end + 1;
      ++lineNumber;
      const auto words = splitWords(line);
      if (words.empty()) {
        if (inMatrix && rowsSeen > 0) {
          break;  // the matrix ends at the first blank line after its rows
        }
        continue;
      }
      if (!inMatrix) {
        // The header names GPU0 first; a row starts with GPU0 followed by X.
        if (gpuName(words[0]) == 0 && (words.size() < 2 || words[1] != "X")) {
          auto header = parseHeader(words, lineNumber);
          if (!header.ok()) {
            return header.error();
          }
          header_ = *header;
          headerLine_ = lineNumber;
          rows_.assign(static_cast<std::size_t>(header_.gpus), Row{});
          inMatrix = true;
        }
        continue;  // a command line or prompt echoed above the matrix
      }
      if (words[0] == "Legend:" || words[0] == "NIC") {
        break;  // legend and NIC legend blocks follow the matrix
      }
      const auto gpu = gpuName(words[0]);
      if (!gpu) {
        continue;  // NIC rows
      }
      if (*gpu >= header_.gpus) {
        return captureError(lineNumber, "row " + std::string(words[0]) + " but the header names " +
                                            std::to_string(header_.gpus) + " GPUs");
      }
      Row& row = rows_[static_cast<std::size_t>(*gpu)];
      if (row.line != 0) {
        return captureError(lineNumber, "second row for " + std::string(words[0]));
      }
      const std::size_t want = 1 + static_cast<std::size_t>(header_.gpus + header_.devices);
      if (truncated(line)) {
        return captureError(lineNumber,
                            std::string(words[0]) + " row ends in an ellipsis (partial capture)");
      }
      if (words.size() < want) {
        return captureError(
            lineNumber,
            std::string(words[0]) + " row is cut short: " + std::to_string(words.size() - 1) +
                " cells, want at least " + std::to_string(want - 1) + " (partial capture)");
      }
      row.line = lineNumber;
      row.words = words;
      ++rowsSeen;
    }
    lastLine_ = lineNumber;
    if (headerLine_ == 0) {
      return captureError(lastLine_, "no matrix header naming GPU0 (not a topo -m capture)");
    }
    for (int i = 0; i < header_.gpus; ++i) {
      if (rows_[static_cast<std::size_t>(i)].line == 0) {
        return captureError(lastLine_, "no row for GPU" + std::to_string(i) + " of " +
                                           std::to_string(header_.gpus) + " (partial capture)");
      }
    }
    return Ok{};
  }

  Result<TopoMatrixText> buildMatrix() const {
    const int n = header_.gpus;
    TopoMatrixText matrix;
    matrix.gpuCount = n;
    matrix.headerLine = headerLine_;
    matrix.nvlinks.assign(static_cast<std::size_t>(pairCount(n)), 0);
    matrix.pcie.assign(static_cast<std::size_t>(pairCount(n)), PcieLevel::kUnknown);
    for (int i = 0; i < n; ++i) {
      const Row& row = rows_[static_cast<std::size_t>(i)];
      matrix.rowLines.push_back(row.line);
      if (row.words[static_cast<std::size_t>(i + 1)] != "X") {
        return captureError(row.line, "GPU" + std::to_string(i) + " diagonal cell is '" +
                                          std::string(row.words[static_cast<std::size_t>(i + 1)]) +
                                          "', want X");
      }
      for (int j = i + 1; j < n; ++j) {
        if (auto status = decodePair(matrix, i, j); !status.ok()) {
          return status.error();
        }
      }
      matrix.numa.push_back(numaOf(row));
    }
    return matrix;
  }

  Status decodePair(TopoMatrixText& matrix, int i, int j) const {
    const Row& upper = rows_[static_cast<std::size_t>(i)];
    const Row& lower = rows_[static_cast<std::size_t>(j)];
    const std::string_view cell = upper.words[static_cast<std::size_t>(j + 1)];
    const std::string_view mirror = lower.words[static_cast<std::size_t>(i + 1)];
    const std::string pair = "GPU" + std::to_string(i) + "/GPU" + std::to_string(j);
    if (cell != mirror) {
      return captureError(lower.line, pair + " asymmetric: '" + std::string(cell) + "' and '" +
                                          std::string(mirror) + "'");
    }
    const auto decoded = decodeCell(cell);
    if (!decoded) {
      return captureError(upper.line, pair + " cell '" + std::string(cell) +
                                          "' is not NV<1-35>, PIX, PXB, PHB, NODE, SYS or SOC");
    }
    if (kind_ == MatrixKind::kPcieOnly && decoded->links > 0) {
      return captureError(
          upper.line, pair + " shows " + std::string(cell) + " in a PCIe-only (topo -mp) matrix");
    }
    const auto k = static_cast<std::size_t>(pairIndex(i, j, matrix.gpuCount));
    matrix.nvlinks[k] = decoded->links;
    matrix.pcie[k] = decoded->level;
    return Ok{};
  }

  // The NUMA Affinity column when the row has exactly the header's trailing columns. CPU and NUMA
  // affinity are computed inside the caller's cgroup and can be empty there, which shifts the
  // words: then NUMA is unknown rather than guessed. Multi-node values ("0-1") are unknown too.
  int numaOf(const Row& row) const {
    const std::size_t firstTrailing = 1 + static_cast<std::size_t>(header_.gpus + header_.devices);
    const std::size_t trailingWords = row.words.size() - firstTrailing;
    if (header_.trailing.numaIndex < 0 ||
        trailingWords != static_cast<std::size_t>(header_.trailing.count)) {
      return -1;
    }
    const auto node =
        decimal(row.words[firstTrailing + static_cast<std::size_t>(header_.trailing.numaIndex)]);
    return node && *node <= kMaxLinks ? *node : -1;
  }

  std::string_view text_;
  MatrixKind kind_;
  Header header_;
  int headerLine_ = 0;
  int lastLine_ = 0;
  std::vector<Row> rows_;
};

}  // namespace

Result<TopoMatrixText> parseTopoMatrix(std::string_view text, MatrixKind kind) {
  return MatrixParser(text, kind).parse();
}

}  // namespace gte::agent
