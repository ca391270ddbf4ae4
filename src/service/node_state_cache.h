#pragma once
// Full-Node mode (no cluster cache): kube-scheduler sends every node object on every call, so the
// per-node precomputation (topology graph, best sets per size, MIG fits) is memoised with the same
// rule as the cluster cache's snapshot builder (core/node_content.h): a node is rebuilt only when
// its content (labels, GPU and MIG allocatable, compared with the node it was read from) or the
// policy changes, not per request. Sharded locks keep
// concurrent requests from contending; a lookup holds its shard's lock only to copy a shared_ptr.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "base/mutex.h"
#include "core/node_content.h"
#include "model/node_info.h"
#include "policy/policy.h"

namespace gte {

struct NodeState;

class NodeStateCache {
 public:
  explicit NodeStateCache(std::size_t maxEntries = 20000) : maxEntries_(maxEntries) {}

  struct Lookup {
    std::shared_ptr<const NodeState> state;
    bool built =
        false;  // true when this call (re)built it: the caller logs/counts label errors once
  };
  Lookup get(const NodeInfo& node, const PolicyConstSharedPtr& policy);
  std::size_t size() const;

 private:
  struct Entry {
    NodeReadKey key;                       // the policy `state` was built under
    std::shared_ptr<const NodeInfo> node;  // what it was read from (compared outside the lock)
    std::shared_ptr<const NodeState> state;
  };
  struct Shard {
    mutable Mutex mutex;
    std::unordered_map<std::string, Entry> entries GTE_GUARDED_BY(mutex);
  };
  static constexpr std::size_t kShards = 16;

  Shard& shardFor(const std::string& name);
  const Shard& shardFor(const std::string& name) const;

  std::size_t maxEntries_;
  std::array<Shard, kShards> shards_;
};

}  // namespace gte
