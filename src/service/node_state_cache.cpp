#include "service/node_state_cache.h"

#include <functional>

#include "core/node_content.h"
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
  Shard& shard = shardFor(node.name);
  std::shared_ptr<const NodeInfo> readFrom;
  std::shared_ptr<const NodeState> cached;
  {
    MutexLock lock(shard.mutex);
    auto it = shard.entries.find(node.name);
    if (it != shard.entries.end() && it->second.key.current(policy)) {
      if (it->second.key.policy != policy) {
        it->second.key.policy = policy;  // an equal reloaded policy: later checks by identity
      }
      readFrom = it->second.node;
      cached = it->second.state;
    }
  }
  // Compared outside the lock: the entry's node is immutable and held.
  if (readFrom && sameNodeContent(*readFrom, node)) return {std::move(cached), false};
  // Built outside the lock: two racing requests may both build; the results are equal.
  auto state = buildNodeState(node, NodeUsage{}, *policy);
  auto read = std::make_shared<const NodeInfo>(node);
  MutexLock lock(shard.mutex);
  if (shard.entries.size() >= maxEntries_ / kShards + 1 && !shard.entries.contains(node.name)) {
    shard.entries.erase(shard.entries.begin());  // bounded memory against churn of node names
  }
  shard.entries.insert_or_assign(node.name, Entry{NodeReadKey{policy}, std::move(read), state});
  return {state, true};
}

std::size_t NodeStateCache::size() const {
  std::size_t n = 0;
  for (const auto& s : shards_) {
    MutexLock lock(s.mutex);
    n += s.entries.size();
  }
  return n;
}

}  // namespace gte
