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

GpuTopology blankTopology(TopologySource source, int gpuCount, MigMode migMode) {
  GpuTopology topo;
  topo.source = source;
  topo.gpuCount = gpuCount;
  const auto gpus = static_cast<std::size_t>(gpuCount);
  const auto pairs = static_cast<std::size_t>(pairCount(gpuCount));
  topo.nvlinks.assign(pairs, 0);
  topo.pcie.assign(pairs, PcieLevel::kUnknown);
  topo.numa.assign(gpus, -1);
  topo.health.assign(gpus, GpuHealth::kHealthy);
  topo.used.assign(gpus, GpuUse::kFree);
  topo.migMode.assign(gpus, migMode);
  topo.migInstances.assign(gpus, {});
  return topo;
}

int GpuTopology::installedNvlinks(int i, int j) const noexcept {
  if (!linksKnown || i == j) {
    return 0;
  }
  return nvlinks[static_cast<std::size_t>(orderedPairIndex(i, j, gpuCount))];
}

int GpuTopology::nvlinkCount(int i, int j) const noexcept {
  return linkHealthOf(i, j) == LinkHealth::kCordoned ? 0 : installedNvlinks(i, j);
}

PcieLevel GpuTopology::pcieLevel(int i, int j) const noexcept {
  if (!linksKnown || i == j) {
    return PcieLevel::kUnknown;
  }
  return pcie[static_cast<std::size_t>(orderedPairIndex(i, j, gpuCount))];
}

std::string_view linkHealthName(LinkHealth health) noexcept {
  switch (health) {
    case LinkHealth::kDegraded:
      return "degraded";
    case LinkHealth::kDown:
      return "down";
    case LinkHealth::kCordoned:
      return "cordoned";
    case LinkHealth::kOk:
      break;
  }
  return "ok";
}

LinkHealth GpuTopology::linkHealthOf(int i, int j) const noexcept {
  if (linkHealth.empty() || i == j || i < 0 || j < 0 || i >= gpuCount || j >= gpuCount) {
    return LinkHealth::kOk;
  }
  const auto at = static_cast<std::size_t>(orderedPairIndex(i, j, gpuCount));
  return at < linkHealth.size() ? linkHealth[at] : LinkHealth::kOk;
}

LinkClass GpuTopology::linkClass(int i, int j) const noexcept {
  if (nvlinkCount(i, j) > 0) {
    return LinkClass::kNvlink;
  }
  return linkClassOf(pcieLevel(i, j));
}

}  // namespace gte
