#include "dra/slice_index.h"

#include <algorithm>

namespace gte::dra {
namespace {

void eraseName(std::vector<std::string>& names, std::string_view name) {
  names.erase(std::remove(names.begin(), names.end(), name), names.end());
}

}  // namespace

void SliceIndex::upsert(ResourceSliceConstSharedPtr slice) {
  remove(slice->name);
  byNode_[slice->selection.nodeName].push_back(slice->name);
  byPool_[{slice->driver, slice->pool}].push_back(slice->name);
  byName_.emplace(slice->name, std::move(slice));
}

void SliceIndex::remove(std::string_view name) {
  const auto it = byName_.find(name);
  if (it == byName_.end()) return;
  const ResourceSlice& old = *it->second;
  if (const auto node = byNode_.find(old.selection.nodeName); node != byNode_.end()) {
    eraseName(node->second, name);
    if (node->second.empty()) byNode_.erase(node);
  }
  if (const auto pool = byPool_.find({old.driver, old.pool}); pool != byPool_.end()) {
    eraseName(pool->second, name);
    if (pool->second.empty()) byPool_.erase(pool);
  }
  byName_.erase(it);
}

std::vector<ResourceSliceConstSharedPtr> SliceIndex::onNode(std::string_view node) const {
  std::vector<ResourceSliceConstSharedPtr> out;
  if (node.empty()) return out;
  if (const auto it = byNode_.find(node); it != byNode_.end()) {
    for (const std::string& name : it->second)
      out.push_back(byName_.find(name)->second);
  }
  return out;
}

std::vector<ResourceSliceConstSharedPtr> SliceIndex::unpinned() const {
  std::vector<ResourceSliceConstSharedPtr> out;
  if (const auto it = byNode_.find(std::string_view()); it != byNode_.end()) {
    for (const std::string& name : it->second)
      out.push_back(byName_.find(name)->second);
  }
  return out;
}

std::vector<ResourceSliceConstSharedPtr> SliceIndex::inPool(std::string_view driver,
                                                            std::string_view pool) const {
  std::vector<ResourceSliceConstSharedPtr> out;
  if (const auto it = byPool_.find({std::string(driver), std::string(pool)}); it != byPool_.end()) {
    for (const std::string& name : it->second)
      out.push_back(byName_.find(name)->second);
  }
  return out;
}

std::vector<std::string> SliceIndex::nodesOfPool(std::string_view driver, std::string_view pool,
                                                 bool& everyNode) const {
  everyNode = false;
  std::vector<std::string> nodes;
  for (const ResourceSliceConstSharedPtr& slice : inPool(driver, pool)) {
    if (slice->selection.nodeName.empty()) {
      everyNode = true;
      return {};
    }
    if (std::find(nodes.begin(), nodes.end(), slice->selection.nodeName) == nodes.end()) {
      nodes.push_back(slice->selection.nodeName);
    }
  }
  return nodes;
}

const ResourceSliceConstSharedPtr* SliceIndex::find(std::string_view name) const {
  const auto it = byName_.find(name);
  return it == byName_.end() ? nullptr : &it->second;
}

}  // namespace gte::dra
