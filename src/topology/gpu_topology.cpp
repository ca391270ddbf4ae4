#include "topology/gpu_topology.h"

#include <utility>

namespace gte {
namespace {

int orderedPairIndex(int i, int j, int n) noexcept {
  if (i > j) {
    std::swap(i, j);
  }
  return pairIndex(i, j, n);
}

}  // namespace

int GpuTopology::nvlinkCount(int i, int j) const noexcept {
  if (!linksKnown || i == j) {
    return 0;
  }
  return nvlinks[static_cast<std::size_t>(orderedPairIndex(i, j, gpuCount))];
}

PcieLevel GpuTopology::pcieLevel(int i, int j) const noexcept {
  if (!linksKnown || i == j) {
    return PcieLevel::kUnknown;
  }
  return pcie[static_cast<std::size_t>(orderedPairIndex(i, j, gpuCount))];
}

LinkClass GpuTopology::linkClass(int i, int j) const noexcept {
  if (nvlinkCount(i, j) > 0) {
    return LinkClass::kNvlink;
  }
  return linkClassOf(pcieLevel(i, j));
}

}  // namespace gte
