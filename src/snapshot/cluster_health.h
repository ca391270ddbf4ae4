#pragma once
// The cluster's topology-health figures for one snapshot (docs/topology-health.md): the totals of
// every node's NodeHealth, overall and per pool. A node's pool is the value of the node label the
// operator names (`--health-pool-label`), else its GPU model, else "unknown"; the pools are
// bounded so the metrics' label values are (kMaxHealthPools, the smallest folded into "other").
// The snapshot builder keeps each shard's pool totals and merges the 64 shards per build, so a
// change on one node re-sums one shard.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "health/node_health.h"
#include "model/node_info.h"

namespace gte {

inline constexpr std::size_t kMaxHealthPools = 32;
inline constexpr std::string_view kOtherPool = "other";
inline constexpr std::string_view kUnknownPool = "unknown";

struct PoolHealth {
  std::string pool;
  HealthTotals totals;
  friend bool operator==(const PoolHealth&, const PoolHealth&) = default;
};
using PoolHealthList = std::vector<PoolHealth>;  // sorted by pool name

struct ClusterHealth {
  HealthTotals total;
  PoolHealthList pools;  // at most kMaxHealthPools
};

// The pool a node counts in: its `poolLabel` value when set and non-empty, else its GPU model.
std::string poolOf(const NodeInfo& node, const NodeState& state, std::string_view poolLabel);

// Adds one node's figures to `pools` (kept sorted by name).
void addToPool(PoolHealthList& pools, std::string_view pool, const NodeHealth& health);

// The cluster's figures from every shard's pool totals; pools beyond kMaxHealthPools (the ones
// with the fewest nodes, then by name) are folded into "other".
ClusterHealth mergeHealth(std::span<const PoolHealthList> shards);

}  // namespace gte
