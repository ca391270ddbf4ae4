#pragma once
// A simulated cluster's topology domains at the pod-group levels (policy `groups.levels`, innermost
// first): per node the domain id its label names at each level, interned as the extender's snapshot
// interns them (group/group_domains.h), and the names behind the ids. What the label-level baseline
// chooses among, what the planner is given, and what the group metrics call "whole" (every member
// in one domain).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "group/group_domains.h"
#include "policy/group_levels.h"
#include "sim/sim_pod.h"

namespace gte::sim {

// "clique", "accelerator", "block": the label's name after its last '/' and '.'.
std::string levelShortName(std::string_view label);

class TopologyDomains {
 public:
  // At most kMaxGroupLevels levels are read, as the extender reads them.
  TopologyDomains(std::span<const SimNodeSpec> cluster, const std::vector<GroupLevel>& levels);

  std::span<const GroupLevel> levels() const noexcept { return levels_; }
  // Per level, the domain of `node` (kNoDomain where it lacks the label).
  const GroupDomainIds& idsOf(std::size_t node) const { return ids_[node]; }
  // Domain of `node` at `level`; -1 when the node lacks the label.
  int domainOf(std::size_t level, std::size_t node) const {
    const std::uint32_t id = ids_[node][level];
    return id == kNoDomain ? -1 : static_cast<int>(id);
  }
  std::size_t domainCount(std::size_t level) const { return names_->byLevel[level].size(); }
  std::string_view domainName(std::size_t level, int domain) const {
    return names_->name(level, static_cast<std::uint32_t>(domain));
  }
  const GroupDomainNames& names() const { return *names_; }
  // The innermost level, not ignored, that some of `nodes` (a mask over the cluster) carry; -1
  // for none.
  int innermostLevel(std::span<const std::uint8_t> nodes) const;
  // Whether some of `nodes` carry the level's label.
  bool carried(std::size_t level, std::span<const std::uint8_t> nodes) const;

 private:
  std::vector<GroupLevel> levels_;
  std::vector<GroupDomainIds> ids_;  // per node
  GroupDomainNamesConstSharedPtr names_;
};

}  // namespace gte::sim
