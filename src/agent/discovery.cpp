#include "agent/discovery.h"

namespace gte::agent {

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
