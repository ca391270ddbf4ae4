#pragma once
// Every ResourceSlice the cluster cache holds, by name, by the node it names and by pool: what the
// per-node device order is gathered from (node_devices.h). The cluster state keeps one and feeds
// it from the slice watch; it is not shared across threads.
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dra/resource_slice.h"

namespace gte::dra {

class SliceIndex {
 public:
  // Adds or replaces the slice with that name.
  void upsert(ResourceSliceConstSharedPtr slice);
  void remove(std::string_view name);

  // Slices whose spec.nodeName is `node`.
  std::vector<ResourceSliceConstSharedPtr> onNode(std::string_view node) const;
  // Slices without spec.nodeName (allNodes, a nodeSelector, or per-device selection): candidates
  // for every node.
  std::vector<ResourceSliceConstSharedPtr> unpinned() const;
  // Every slice of the pool, any generation, any node.
  std::vector<ResourceSliceConstSharedPtr> inPool(std::string_view driver,
                                                  std::string_view pool) const;
  // The nodes whose device order a change of this pool affects: the nodes its slices name, or,
  // for a pool with unpinned slices, every node (an empty result with `everyNode` set).
  std::vector<std::string> nodesOfPool(std::string_view driver, std::string_view pool,
                                       bool& everyNode) const;
  const ResourceSliceConstSharedPtr* find(std::string_view name) const;
  // Calls visit(slice) for every slice, by name.
  template <typename Visit>
  void forEach(Visit visit) const {
    for (const auto& [name, slice] : byName_)
      visit(slice);
  }
  std::size_t size() const noexcept { return byName_.size(); }

 private:
  using PoolKey = std::pair<std::string, std::string>;
  std::map<std::string, ResourceSliceConstSharedPtr, std::less<>> byName_;
  std::map<std::string, std::vector<std::string>, std::less<>> byNode_;  // "" = unpinned
  std::map<PoolKey, std::vector<std::string>> byPool_;
};

}  // namespace gte::dra
