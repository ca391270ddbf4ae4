#include "agent/discovery.h"

namespace gte::agent {

GpuTopology emptyTopology(int n) {
  GpuTopology topo;
  topo.source = TopologySource::kLabelsV1;
  topo.gpuCount = n;
  const auto gpus = static_cast<std::size_t>(n);
  const auto pairs = static_cast<std::size_t>(pairCount(n));
  topo.nvlinks.assign(pairs, 0);
  topo.pcie.assign(pairs, PcieLevel::kUnknown);
  topo.numa.assign(gpus, -1);
  topo.health.assign(gpus, GpuHealth::kHealthy);
  topo.used.assign(gpus, GpuUse::kFree);
  topo.migMode.assign(gpus, MigMode::kNotCapable);
  topo.migInstances.assign(gpus, {});
  return topo;
}

std::vector<std::string> placementMismatches(const Discovery& discovery,
                                             const std::vector<MigProduct>& products) {
  std::vector<std::string> out;
  const MigProduct* product = findMigProduct(products, discovery.topology.model);
  for (std::size_t gpu = 0; gpu < discovery.placements.size(); ++gpu) {
    for (const ProfilePlacements& driver : discovery.placements[gpu]) {
      const MigProfile* table = product ? product->findByCode(driver.code) : nullptr;
      const std::string where = "GPU " + std::to_string(gpu) + " profile ID " +
                                std::to_string(driver.profileId) + " (code " + driver.code + ")";
      if (table == nullptr) {
        out.push_back(where + ": not in the extender's MIG table for model '" +
                      discovery.topology.model + "'");
      } else if (table->slices != driver.size || table->starts != driver.starts) {
        out.push_back(where + ": driver placements differ from the extender's table for " +
                      table->name);
      }
    }
  }
  return out;
}

}  // namespace gte::agent
