#pragma once
// A simulated cluster's topology domains: per level (a node label, innermost first) the distinct
// label values, and per node the domain it belongs to at each level (-1 when the node does not
// carry the level's label). What the label-level baselines choose among, and what the group metrics
// call "whole" (every member in one domain).
#include <span>
#include <string>
#include <vector>

#include "sim/sim_pod.h"

namespace gte::sim {

struct DomainLevel {
  std::string label;      // e.g. "nvidia.com/gpu.clique"
  bool required = false;  // a group must fit one domain of it (else: preferred)
};

// nvidia.com/gpu.clique required; network.topology.nvidia.com/accelerator and /block preferred.
std::vector<DomainLevel> defaultDomainLevels();

// "clique", "accelerator", "block": the label's name after its last '/' and '.'.
std::string levelShortName(std::string_view label);

class TopologyDomains {
 public:
  TopologyDomains(std::span<const SimNodeSpec> cluster, std::vector<DomainLevel> levels);

  std::span<const DomainLevel> levels() const noexcept { return levels_; }
  // Domain of `node` at `level`; -1 when the node lacks the label.
  int domainOf(std::size_t level, std::size_t node) const { return domainOf_[level][node]; }
  std::size_t domainCount(std::size_t level) const { return names_[level].size(); }
  const std::string& domainName(std::size_t level, int domain) const {
    return names_[level][static_cast<std::size_t>(domain)];
  }
  // The innermost level some of `nodes` (a mask over the cluster) carry; -1 for none.
  int innermostLevel(std::span<const std::uint8_t> nodes) const;

 private:
  std::vector<DomainLevel> levels_;
  std::vector<std::vector<int>> domainOf_;       // [level][node]
  std::vector<std::vector<std::string>> names_;  // [level][domain]: the label value
};

}  // namespace gte::sim
