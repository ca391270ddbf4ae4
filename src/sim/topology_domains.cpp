#include "sim/topology_domains.h"

namespace gte::sim {

std::string levelShortName(std::string_view label) {
  const std::size_t slash = label.rfind('/');
  std::string_view name = slash == std::string_view::npos ? label : label.substr(slash + 1);
  const std::size_t dot = name.rfind('.');
  return std::string(dot == std::string_view::npos ? name : name.substr(dot + 1));
}

TopologyDomains::TopologyDomains(std::span<const SimNodeSpec> cluster,
                                 const std::vector<GroupLevel>& levels)
    : levels_(levels.begin(), levels.begin() + static_cast<std::ptrdiff_t>(
                                                   std::min(levels.size(), kMaxGroupLevels))) {
  GroupDomainInterner interner;
  interner.setLevels(levels_);
  ids_.reserve(cluster.size());
  for (const SimNodeSpec& node : cluster) {
    ids_.push_back(interner.idsOf(node.labels));
  }
  names_ = interner.names();
}

bool TopologyDomains::carried(std::size_t level, std::span<const std::uint8_t> nodes) const {
  for (std::size_t node = 0; node < nodes.size(); ++node) {
    if (nodes[node] != 0 && ids_[node][level] != kNoDomain) {
      return true;
    }
  }
  return false;
}

int TopologyDomains::innermostLevel(std::span<const std::uint8_t> nodes) const {
  for (std::size_t level = 0; level < levels_.size(); ++level) {
    if (levels_[level].mode != GroupLevelMode::kIgnored && carried(level, nodes)) {
      return static_cast<int>(level);
    }
  }
  return -1;
}

}  // namespace gte::sim
