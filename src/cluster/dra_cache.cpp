#include "cluster/dra_cache.h"

#include <algorithm>
#include <utility>

#include "dra/slice_taint_rules.h"

namespace gte::cluster {
namespace {

void addNode(std::vector<std::string>& nodes, std::string node) {
  if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(std::move(node));
}

// Whether the devices a claim holds, or the pods holding them, differ.
bool sameHold(const dra::ResourceClaim& a, const dra::ResourceClaim& b) {
  return a.allocated == b.allocated && a.devices == b.devices && a.reservedFor == b.reservedFor;
}

// Whether two versions of a class select the same devices and back the same extended resource
// (an edit of its labels or annotations changes neither).
bool sameSelection(const dra::DeviceClass& a, const dra::DeviceClass& b) {
  return a.selectors == b.selectors && a.extendedResourceName == b.extendedResourceName &&
         a.creationTimestamp == b.creationTimestamp && a.unknownSelector == b.unknownSelector;
}

}  // namespace

DraCache::DraCache() : objects_(std::make_shared<const ClaimShards>(nullptr)) {}

DraCounts DraCache::counts() const noexcept {
  return DraCounts{slices_.size(), classes_.size(), objects_->size(), allocated_.size(),
                   rules_.size()};
}

void DraCache::markPool(std::string_view driver, std::string_view pool, DraChange& change) const {
  if (change.everyNode) return;
  bool everyNode = false;
  for (std::string& node : slices_.nodesOfPool(driver, pool, everyNode))
    addNode(change.nodes, std::move(node));
  if (everyNode) change.everyNode = true;
}

void DraCache::markClaim(const dra::ResourceClaim& claim, DraChange& change) const {
  for (const dra::AllocatedDevice& device : claim.devices)
    markPool(device.driver, device.pool, change);
}

void DraCache::storeSlice(dra::ResourceSliceConstSharedPtr slice) {
  if (const auto it = untainted_.find(slice->name); it != untainted_.end()) untainted_.erase(it);
  if (!ruleList_.empty()) {
    dra::ResourceSliceConstSharedPtr merged = dra::withTaintRules(slice, ruleList_);
    if (merged != slice) {
      std::string name = slice->name;
      untainted_.insert_or_assign(std::move(name), std::move(slice));
      slice = std::move(merged);
    }
  }
  slices_.upsert(std::move(slice));
}

void DraCache::replaceSlices(std::vector<dra::ResourceSliceConstSharedPtr> slices,
                             DraChange& change) {
  slices_ = dra::SliceIndex{};
  untainted_.clear();
  for (auto& slice : slices)
    storeSlice(std::move(slice));
  change.everyNode = true;
}

void DraCache::upsertSlice(dra::ResourceSliceConstSharedPtr slice, DraChange& change) {
  if (const auto* old = slices_.find(slice->name)) markPool((*old)->driver, (*old)->pool, change);
  const std::string driver = slice->driver;
  const std::string pool = slice->pool;
  storeSlice(std::move(slice));
  markPool(driver, pool, change);
}

void DraCache::removeSlice(std::string_view name, DraChange& change) {
  const auto* old = slices_.find(name);
  if (old == nullptr) return;
  const dra::ResourceSliceConstSharedPtr gone = *old;
  markPool(gone->driver, gone->pool, change);  // before: the nodes it served
  slices_.remove(name);
  if (const auto it = untainted_.find(name); it != untainted_.end()) untainted_.erase(it);
}

void DraCache::setRules(
    std::map<std::string, dra::DeviceTaintRuleConstSharedPtr, std::less<>> rules) {
  rules_ = std::move(rules);
  ruleList_.clear();
  for (const auto& [name, rule] : rules_)
    ruleList_.push_back(rule);
}

void DraCache::retaint(const std::vector<dra::DeviceTaintRuleConstSharedPtr>& changed,
                       DraChange& change) {
  if (changed.empty()) return;
  std::vector<dra::ResourceSliceConstSharedPtr> affected;  // as read
  slices_.forEach([&](const dra::ResourceSliceConstSharedPtr& slice) {
    if (!dra::taintsSome(*slice, changed)) return;  // device names are those read
    const auto it = untainted_.find(slice->name);
    affected.push_back(it == untainted_.end() ? slice : it->second);
  });
  for (dra::ResourceSliceConstSharedPtr& slice : affected) {
    markPool(slice->driver, slice->pool, change);
    storeSlice(std::move(slice));
  }
}

void DraCache::replaceTaintRules(std::vector<dra::DeviceTaintRuleConstSharedPtr> rules,
                                 DraChange& change) {
  std::map<std::string, dra::DeviceTaintRuleConstSharedPtr, std::less<>> next;
  for (auto& rule : rules) {
    std::string name = rule->name;
    next.insert_or_assign(std::move(name), std::move(rule));
  }
  // Only rules added, removed or with another selector or taint change any slice.
  std::vector<dra::DeviceTaintRuleConstSharedPtr> changed;
  const auto collect = [&changed](const auto& from, const auto& against) {
    for (const auto& [name, rule] : from) {
      const auto other = against.find(name);
      if (other == against.end() || !other->second->sameTaint(*rule)) changed.push_back(rule);
    }
  };
  collect(rules_, next);
  collect(next, rules_);
  setRules(std::move(next));
  retaint(changed, change);
}

void DraCache::upsertTaintRule(dra::DeviceTaintRuleConstSharedPtr rule, DraChange& change) {
  std::vector<dra::DeviceTaintRuleConstSharedPtr> changed{rule};
  if (const auto it = rules_.find(rule->name); it != rules_.end()) {
    if (it->second->sameTaint(*rule)) {
      changed.clear();  // metadata or status only
    } else {
      changed.push_back(it->second);
    }
  }
  auto next = rules_;
  std::string name = rule->name;
  next.insert_or_assign(std::move(name), std::move(rule));
  setRules(std::move(next));
  retaint(changed, change);
}

void DraCache::removeTaintRule(std::string_view name, DraChange& change) {
  const auto it = rules_.find(name);
  if (it == rules_.end()) return;
  const std::vector<dra::DeviceTaintRuleConstSharedPtr> changed{it->second};
  auto next = rules_;
  next.erase(std::string(name));
  setRules(std::move(next));
  retaint(changed, change);
}

void DraCache::rebuildCatalog(DraChange& change) {
  std::vector<dra::DeviceClassConstSharedPtr> classes;
  classes.reserve(classes_.size());
  for (const auto& [name, cls] : classes_)
    classes.push_back(cls);
  objects_ = objects_->withClasses(std::make_shared<const dra::ClassCatalog>(std::move(classes)));
  change.objects = true;
  change.everyNode = true;  // every node's class matches are computed against the catalog
}

void DraCache::replaceClasses(std::vector<dra::DeviceClassConstSharedPtr> classes,
                              DraChange& change) {
  classes_.clear();
  for (auto& cls : classes) {
    std::string name = cls->name;
    classes_.insert_or_assign(std::move(name), std::move(cls));
  }
  rebuildCatalog(change);
}

void DraCache::upsertClass(dra::DeviceClassConstSharedPtr cls, DraChange& change) {
  const auto it = classes_.find(cls->name);
  // Unchanged selection: the catalog (and every node's class matches) stands, keeping the older
  // version until the next rebuild; re-deriving every node costs ~0.2 s at 5,000 nodes.
  const bool same = it != classes_.end() && sameSelection(*it->second, *cls);
  std::string name = cls->name;
  classes_.insert_or_assign(std::move(name), std::move(cls));
  if (!same) rebuildCatalog(change);
}

void DraCache::removeClass(std::string_view name, DraChange& change) {
  const auto it = classes_.find(name);
  if (it == classes_.end()) return;
  classes_.erase(it);
  rebuildCatalog(change);
}

void DraCache::replaceClaims(std::vector<dra::ResourceClaimConstSharedPtr> claims,
                             DraChange& change) {
  allocated_ = dra::AllocatedDevices{};
  for (const auto& claim : claims)
    allocated_.addClaim(*claim);
  objects_ = objects_->withClaims(claims);
  change.objects = true;
  change.everyNode = true;
}

void DraCache::upsertClaim(dra::ResourceClaimConstSharedPtr claim, DraChange& change) {
  const dra::ResourceClaimConstSharedPtr old = objects_->claim(claim->ns, claim->name);
  if (!old || !sameHold(*old, *claim)) {
    if (old) {
      allocated_.removeClaim(*old);
      markClaim(*old, change);
    }
    allocated_.addClaim(*claim);
    markClaim(*claim, change);
  }
  objects_ = objects_->with(std::move(claim));
  change.objects = true;
}

void DraCache::removeClaim(std::string_view ns, std::string_view name, DraChange& change) {
  const dra::ResourceClaimConstSharedPtr old = objects_->claim(ns, name);
  if (!old) return;
  allocated_.removeClaim(*old);
  markClaim(*old, change);
  objects_ = objects_->without(ns, name);
  change.objects = true;
}

}  // namespace gte::cluster
