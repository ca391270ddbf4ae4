#pragma once
// What the cluster state keeps of Dynamic Resource Allocation (docs/dra.md), fed by the
// resource.k8s.io/v1 watches: every ResourceSlice (SliceIndex, with the DeviceTaintRules' taints
// merged into its devices as kube-scheduler merges them), the devices every ResourceClaim's
// allocation holds (AllocatedDevices), the DeviceClasses and the claims themselves (the snapshot's
// ClaimShards). Each change says which nodes' DRA state it affects (DraChange), so the snapshot
// builder re-derives only those. Not thread-safe: the cluster state calls it under its lock.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/claim_shards.h"
#include "dra/allocated_devices.h"
#include "dra/device_class.h"
#include "dra/device_taint_rule.h"
#include "dra/resource_claim.h"
#include "dra/resource_slice.h"
#include "dra/slice_index.h"

namespace gte::cluster {

struct DraChange {
  std::vector<std::string> nodes;  // nodes whose slices or allocated devices changed
  bool everyNode = false;          // a change that may concern any node
  bool objects = false;            // claims or classes changed: the snapshot gets new DraObjects
};

struct DraCounts {
  std::size_t slices = 0;
  std::size_t classes = 0;
  std::size_t claims = 0;
  std::size_t allocatedDevices = 0;
  std::size_t taintRules = 0;
};

class DraCache {
 public:
  DraCache();

  const dra::SliceIndex& slices() const noexcept { return slices_; }
  const dra::AllocatedDevices& allocated() const noexcept { return allocated_; }
  const ClaimShardsConstSharedPtr& objects() const noexcept { return objects_; }
  DraCounts counts() const noexcept;

  void replaceSlices(std::vector<dra::ResourceSliceConstSharedPtr> slices, DraChange& change);
  void upsertSlice(dra::ResourceSliceConstSharedPtr slice, DraChange& change);
  void removeSlice(std::string_view name, DraChange& change);

  void replaceClasses(std::vector<dra::DeviceClassConstSharedPtr> classes, DraChange& change);
  void upsertClass(dra::DeviceClassConstSharedPtr cls, DraChange& change);
  void removeClass(std::string_view name, DraChange& change);

  // DeviceTaintRules: a change re-merges the taints of the slices the rule selects a device of
  // (before or after) and marks the nodes their pools serve; a change of metadata or status only
  // (the eviction controller updates the status) re-derives nothing.
  void replaceTaintRules(std::vector<dra::DeviceTaintRuleConstSharedPtr> rules, DraChange& change);
  void upsertTaintRule(dra::DeviceTaintRuleConstSharedPtr rule, DraChange& change);
  void removeTaintRule(std::string_view name, DraChange& change);

  void replaceClaims(std::vector<dra::ResourceClaimConstSharedPtr> claims, DraChange& change);
  void upsertClaim(dra::ResourceClaimConstSharedPtr claim, DraChange& change);
  void removeClaim(std::string_view ns, std::string_view name, DraChange& change);

 private:
  // The nodes the pool serves, as the slice index knows it now.
  void markPool(std::string_view driver, std::string_view pool, DraChange& change) const;
  void markClaim(const dra::ResourceClaim& claim, DraChange& change) const;
  void rebuildCatalog(DraChange& change);
  // Stores the slice as read, with the rules' taints merged in, into the index.
  void storeSlice(dra::ResourceSliceConstSharedPtr slice);
  // Re-merges the slices a device of which one of `changed` (old or new versions) selects.
  void retaint(const std::vector<dra::DeviceTaintRuleConstSharedPtr>& changed, DraChange& change);
  void setRules(std::map<std::string, dra::DeviceTaintRuleConstSharedPtr, std::less<>> rules);

  dra::SliceIndex slices_;  // as the allocator sees them: rule taints merged
  // The slices as read, of those the index holds with rule taints merged (only those: without
  // rules nothing is kept twice).
  std::map<std::string, dra::ResourceSliceConstSharedPtr, std::less<>> untainted_;
  std::map<std::string, dra::DeviceTaintRuleConstSharedPtr, std::less<>> rules_;
  std::vector<dra::DeviceTaintRuleConstSharedPtr> ruleList_;  // rules_'s values, as merged
  dra::AllocatedDevices allocated_;
  std::map<std::string, dra::DeviceClassConstSharedPtr, std::less<>> classes_;
  ClaimShardsConstSharedPtr objects_;
};

}  // namespace gte::cluster
