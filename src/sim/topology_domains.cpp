#include "sim/topology_domains.h"

#include <map>
#include <utility>

#include "sim/rack_labels.h"

namespace gte::sim {

std::vector<DomainLevel> defaultDomainLevels() {
  return {{std::string(kCliqueLabel), true},
          {std::string(kAcceleratorLabel), false},
          {std::string(kBlockLabel), false}};
}

std::string levelShortName(std::string_view label) {
  const std::size_t slash = label.rfind('/');
  std::string_view name = slash == std::string_view::npos ? label : label.substr(slash + 1);
  const std::size_t dot = name.rfind('.');
  return std::string(dot == std::string_view::npos ? name : name.substr(dot + 1));
}

TopologyDomains::TopologyDomains(std::span<const SimNodeSpec> cluster,
                                 std::vector<DomainLevel> levels)
    : levels_(std::move(levels)) {
  for (const DomainLevel& level : levels_) {
    std::map<std::string, int, std::less<>> index;
    std::vector<int>& of = domainOf_.emplace_back(cluster.size(), -1);
    std::vector<std::string>& names = names_.emplace_back();
    for (std::size_t node = 0; node < cluster.size(); ++node) {
      const auto found = cluster[node].labels.find(level.label);
      if (found == cluster[node].labels.end()) {
        continue;
      }
      const auto [entry, added] = index.try_emplace(found->second, static_cast<int>(names.size()));
      if (added) {
        names.push_back(found->second);
      }
      of[node] = entry->second;
    }
  }
}

int TopologyDomains::innermostLevel(std::span<const std::uint8_t> nodes) const {
  for (std::size_t level = 0; level < levels_.size(); ++level) {
    for (std::size_t node = 0; node < nodes.size(); ++node) {
      if (nodes[node] != 0 && domainOf_[level][node] >= 0) {
        return static_cast<int>(level);
      }
    }
  }
  return -1;
}

}  // namespace gte::sim
