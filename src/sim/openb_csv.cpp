#include "sim/openb_csv.h"

#include <charconv>
#include <string>

namespace gte::sim {
namespace {

std::vector<std::string_view> splitFields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = line.find(',', start);
    fields.push_back(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) {
      return fields;
    }
    start = comma + 1;
  }
}

std::vector<std::string_view> splitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') {
      line.remove_suffix(1);
    }
    if (!line.empty()) {
      lines.push_back(line);
    }
    start = end + 1;
  }
  return lines;
}

// Column positions by header name; -1 for an absent column.
struct Columns {
  std::vector<std::string_view> header;
  int find(std::string_view name) const {
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (header[i] == name) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }
};

Result<std::int64_t> field(const std::vector<std::string_view>& fields, int column,
                           std::size_t lineNumber) {
  if (column < 0 || static_cast<std::size_t>(column) >= fields.size()) {
    return invalidArgument("line " + std::to_string(lineNumber) + ": missing column");
  }
  const std::string_view text = fields[static_cast<std::size_t>(column)];
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < 0) {
    return invalidArgument("line " + std::to_string(lineNumber) + ": '" + std::string(text) +
                           "' is not a non-negative integer");
  }
  return value;
}

Result<Columns> readHeader(const std::vector<std::string_view>& lines,
                           std::initializer_list<std::string_view> required) {
  if (lines.empty()) {
    return invalidArgument("empty CSV");
  }
  Columns columns{splitFields(lines.front())};
  for (std::string_view name : required) {
    if (columns.find(name) < 0) {
      return invalidArgument("CSV header lacks column '" + std::string(name) + "'");
    }
  }
  return columns;
}

}  // namespace

Result<std::vector<SimPod>> parseOpenbPods(std::string_view csv) {
  const auto lines = splitLines(csv);
  auto columns = readHeader(lines, {"name", "cpu_milli", "memory_mib", "num_gpu"});
  if (!columns.ok()) {
    return columns.error();
  }
  const int name = columns->find("name");
  const int cpu = columns->find("cpu_milli");
  const int memory = columns->find("memory_mib");
  const int gpu = columns->find("num_gpu");
  std::vector<SimPod> pods;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto fields = splitFields(lines[i]);
    auto cpuValue = field(fields, cpu, i + 1);
    auto memoryValue = field(fields, memory, i + 1);
    auto gpuValue = field(fields, gpu, i + 1);
    if (!cpuValue.ok() || !memoryValue.ok() || !gpuValue.ok()) {
      return !cpuValue.ok() ? cpuValue.error()
                            : (!memoryValue.ok() ? memoryValue.error() : gpuValue.error());
    }
    if (*gpuValue > 64) {
      return invalidArgument("line " + std::to_string(i + 1) + ": num_gpu above 64");
    }
    pods.push_back(SimPod{std::string(fields[static_cast<std::size_t>(name)]), *cpuValue,
                          *memoryValue, static_cast<int>(*gpuValue)});
  }
  return pods;
}

Result<std::vector<SimNodeSpec>> parseOpenbNodes(std::string_view csv,
                                                 const NodeTemplate& eightGpu) {
  const auto lines = splitLines(csv);
  auto columns = readHeader(lines, {"sn", "cpu_milli", "memory_mib", "gpu"});
  if (!columns.ok()) {
    return columns.error();
  }
  const int name = columns->find("sn");
  const int cpu = columns->find("cpu_milli");
  const int memory = columns->find("memory_mib");
  const int gpu = columns->find("gpu");
  std::vector<SimNodeSpec> nodes;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto fields = splitFields(lines[i]);
    auto cpuValue = field(fields, cpu, i + 1);
    auto memoryValue = field(fields, memory, i + 1);
    auto gpuValue = field(fields, gpu, i + 1);
    if (!cpuValue.ok() || !memoryValue.ok() || !gpuValue.ok()) {
      return !cpuValue.ok() ? cpuValue.error()
                            : (!memoryValue.ok() ? memoryValue.error() : gpuValue.error());
    }
    const NodeTemplate* machine = nullptr;
    switch (*gpuValue) {
      case 0:
        continue;
      case 1:
        machine = findNodeTemplate("pcie1");
        break;
      case 2:
        machine = findNodeTemplate("pcie2");
        break;
      case 4:
        machine = findNodeTemplate("pcie4");
        break;
      case 8:
        machine = &eightGpu;
        break;
      default:
        return invalidArgument("line " + std::to_string(i + 1) + ": no node template with " +
                               std::to_string(*gpuValue) + " GPUs");
    }
    nodes.push_back(SimNodeSpec{std::string(fields[static_cast<std::size_t>(name)]), machine,
                                *cpuValue, *memoryValue});
  }
  return nodes;
}

}  // namespace gte::sim
