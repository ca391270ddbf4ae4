#pragma once
// A ResourceSlice as kube-scheduler's allocator sees it once DeviceTaintRules are merged in
// (docs/dra.md, "Device taint rules"): each device's own taints, then the taint of every rule
// that selects it. kube-scheduler 1.37 (its ResourceSlice tracker) appends every matching rule's
// taint; only rules whose effect blocks (NoSchedule, NoExecute) are merged here, since the others
// change no allocation and merging them would copy slices for nothing.
#include <vector>

#include "dra/device_taint_rule.h"
#include "dra/resource_slice.h"

namespace gte::dra {

// The slice with the blocking rules' taints added to the devices they select: `slice` itself
// (not copied) when no rule selects any of its devices.
ResourceSliceConstSharedPtr withTaintRules(const ResourceSliceConstSharedPtr& slice,
                                           const std::vector<DeviceTaintRuleConstSharedPtr>& rules);

// Some blocking rule of `rules` selects a device of the slice.
bool taintsSome(const ResourceSlice& slice,
                const std::vector<DeviceTaintRuleConstSharedPtr>& rules) noexcept;

}  // namespace gte::dra
