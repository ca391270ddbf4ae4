#pragma once
// The GPU link graph of one node (GPUs as vertices, links as weighted edges), built with
// Boost.Graph. Boost stays inside gpu_graph.cpp (a compile firewall): callers see plain results.
#include <memory>
#include <vector>

#include "policy/policy.h"
#include "topology/gpu_topology.h"
#include "topology/pair_table.h"

namespace gte {

class GpuGraph {
 public:
  GpuGraph(const GpuTopology& topology, const LinkScores& scores);
  ~GpuGraph();
  GpuGraph(GpuGraph&&) noexcept;
  GpuGraph& operator=(GpuGraph&&) noexcept;

  // Dense pair facts for the bitmask searches.
  PairTable pairTable() const;
  // The NVLink-connected groups among `members` (connected components of the NVLink edges of the
  // subgraph `members` induces), each as a mask, ordered by lowest GPU.
  std::vector<GpuMask> nvlinkDomains(GpuMask members) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The pair score the NVIDIA device plugin (go-gpuallocator best-effort) gives: its PCIe score plus
// 100 per NVLink, with NVLinks through NVSwitch counted as 0 because upstream cannot see them.
int devicePluginPairScore(const GpuTopology& topology, int i, int j) noexcept;

}  // namespace gte
