#include "snapshot/cluster_health.h"

#include <algorithm>

namespace gte {
namespace {

HealthTotals& totalsFor(PoolHealthList& pools, std::string_view pool) {
  const auto at = std::lower_bound(
      pools.begin(), pools.end(), pool,
      [](const PoolHealth& p, std::string_view name) { return std::string_view(p.pool) < name; });
  if (at != pools.end() && at->pool == pool) return at->totals;
  return pools.insert(at, PoolHealth{std::string(pool), {}})->totals;
}

}  // namespace

std::string poolOf(const NodeInfo& node, const NodeState& state, std::string_view poolLabel) {
  if (!poolLabel.empty()) {
    const auto label = node.labels.find(std::string(poolLabel));
    if (label != node.labels.end() && !label->second.empty()) return label->second;
  }
  return state.topology.model.empty() ? std::string(kUnknownPool) : state.topology.model;
}

void addToPool(PoolHealthList& pools, std::string_view pool, const NodeHealth& health) {
  totalsFor(pools, pool).add(health);
}

ClusterHealth mergeHealth(std::span<const PoolHealthList> shards) {
  ClusterHealth out;
  for (const PoolHealthList& shard : shards) {
    for (const PoolHealth& pool : shard) {
      totalsFor(out.pools, pool.pool).add(pool.totals);
      out.total.add(pool.totals);
    }
  }
  if (out.pools.size() <= kMaxHealthPools) return out;
  // Keep the largest pools by node count; fold the rest into "other".
  std::vector<const PoolHealth*> bySize;
  for (const PoolHealth& pool : out.pools)
    bySize.push_back(&pool);
  std::sort(bySize.begin(), bySize.end(), [](const PoolHealth* a, const PoolHealth* b) {
    return a->totals.nodes != b->totals.nodes ? a->totals.nodes > b->totals.nodes
                                              : a->pool < b->pool;
  });
  PoolHealthList kept;
  HealthTotals other;
  for (std::size_t i = 0; i < bySize.size(); ++i) {
    if (i + 1 < kMaxHealthPools && bySize[i]->pool != kOtherPool) {
      kept.push_back(*bySize[i]);
    } else {
      other.add(bySize[i]->totals);
    }
  }
  std::sort(kept.begin(), kept.end(),
            [](const PoolHealth& a, const PoolHealth& b) { return a.pool < b.pool; });
  totalsFor(kept, kOtherPool).add(other);
  out.pools = std::move(kept);
  return out;
}

}  // namespace gte
