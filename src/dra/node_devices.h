#pragma once
// The devices one node can be allocated from, in the order the scheduler's structured allocator
// (the incubating variant, the one kube-scheduler 1.37 runs with default feature gates) tries
// them: the pools whose slices serve the node, sorted by (driver, pool name) with pools that
// declare binding conditions last; in each pool its slices sorted by name; in each slice its
// devices as listed. Pools that are incomplete (fewer slices of the newest generation than
// resourceSliceCount) or invalid (duplicate device or counter-set names, consumption of an unknown
// counter) contribute no device, as in the allocator. docs/dra.md spells out every rule.
//
// Computed once per change of the node's slices or of the devices allocated from them (the
// snapshot's precompute); a request only walks `devices`.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dra/allocated_devices.h"
#include "dra/resource_slice.h"
#include "dra/slice_index.h"
#include "model/quantity.h"
#include "model/string_map.h"

namespace gte::dra {

struct PoolCounter {
  std::string counterSet;
  std::string name;
  Quantity available;  // the set's value minus what allocated devices of the pool consume
  Quantity total;      // the set's value
};

struct NodePool {
  std::string driver;
  std::string name;
  bool incomplete = false;
  bool invalid = false;
  std::string invalidReason;
  bool bindingConditions = false;  // some device declares them: tried after every other pool
  std::vector<PoolCounter> counters;
};

struct NodeDevice {
  const ResourceSlice* slice = nullptr;  // kept alive by NodeDevices::slices
  std::uint32_t index = 0;               // in slice->devices
  std::uint16_t pool = 0;                // in NodeDevices::pools
  bool inUse = false;                    // exclusively allocated to some claim
  // No taints, no counters consumed, not shareable: the first-fit need not read the device
  // itself past its selectors (most GPU devices).
  bool plain = true;
  // Not shareable and no capacity with a request policy: a request naming no capacity fits it
  // (consumable_capacity.h), so the first-fit skips the capacity check.
  bool capacityPlain = true;
  // Allocated shares of the device (consumable capacity): into NodeDevices::shareUse; -1 none.
  std::int32_t shares = -1;
};

struct NodeDevices {
  std::vector<NodePool> pools;
  std::vector<NodeDevice> devices;  // the allocator's device order
  std::vector<ResourceSliceConstSharedPtr> slices;
  // Per device with allocated shares: what they consume of each of its capacities, in the
  // device's capacity order.
  std::vector<std::vector<Quantity>> shareUse;
  // Set when the scheduler cannot gather this node's pools at all (a slice's node selector the
  // API would refuse): every allocation on the node fails with an error.
  std::string error;

  bool anyIncompleteOrInvalid() const noexcept;
};

// What an allocated share consumes of each of the device's capacities, in the device's order
// (a capacity its consumedCapacity does not name: nothing).
std::vector<Quantity> shareConsumption(const ResourceSlice& slice, const Device& device,
                                       const DeviceShare& share);

// `optionalNodeOperations`: the node declares DRAOptionalNodeOperations. Without it the devices of
// slices with skipNodeOperations are left out (the experimental allocator never takes them there;
// for allocation mode All the allocator fails instead, which the replica does not tell apart).
NodeDevices gatherNodeDevices(std::string_view nodeName, const StringMap& nodeLabels,
                              const SliceIndex& slices, const AllocatedDevices& allocated,
                              bool optionalNodeOperations = false);

}  // namespace gte::dra
