#include "service/node_state_cache.h"

#include <functional>

#include "core/node_content_hash.h"
#include "core/node_state.h"

namespace gte {
NodeStateCache::Shard& NodeStateCache::shardFor(const std::string& name) {
  return shards_[std::hash<std::string>{}(name) % kShards];
}

const NodeStateCache::Shard& NodeStateCache::shardFor(const std::string& name) const {
  return shards_[std::hash<std::string>{}(name) % kShards];
}

NodeStateCache::Lookup NodeStateCache::get(const NodeInfo& node,
                                           const PolicyConstSharedPtr& policy) {
  const std::uint64_t hash = nodeContentHash(node);
  Shard& shard = shardFor(node.name);
  {
    std::lock_guard lock(shard.mutex);
    auto it = shard.entries.find(node.name);
    if (it != shard.entries.end() && it->second.key.current(hash, policy) &&
        sameNodeContent(it->second.node, node)) {
      if (it->second.key.policy != policy) {
        it->second.key.policy = policy;  // an equal reloaded policy: later checks by identity
      }
      return {it->second.state, false};
    }
  }
  // Built outside the lock: two racing requests may both build; the results are equal.
  auto state = buildNodeState(node, NodeUsage{}, *policy);
  std::lock_guard lock(shard.mutex);
  if (shard.entries.size() >= maxEntries_ / kShards + 1 && !shard.entries.contains(node.name)) {
    shard.entries.erase(shard.entries.begin());  // bounded memory against churn of node names
  }
  shard.entries.insert_or_assign(node.name, Entry{NodeReadKey{hash, policy}, node, state});
  return {state, true};
}

std::size_t NodeStateCache::size() const {
  std::size_t n = 0;
  for (const auto& s : shards_) {
    std::lock_guard lock(s.mutex);
    n += s.entries.size();
  }
  return n;
}

}  // namespace gte
