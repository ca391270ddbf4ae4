#include "dra/node_devices.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace gte::dra {
namespace {

using PoolKey = std::pair<std::string, std::string>;
using Slices = std::vector<ResourceSliceConstSharedPtr>;

bool usesCompatibilityGroups(const ResourceSlice& slice) {
  return std::any_of(slice.devices.begin(), slice.devices.end(),
                     [](const Device& d) { return d.compatibilityGroups; });
}

// NodeMatches: a node name, all nodes, or a selector; nothing set matches no node.
Result<bool> selects(const NodeSelection& selection, std::string_view node,
                     const StringMap& labels) {
  if (!selection.nodeName.empty()) return selection.nodeName == node;
  if (selection.allNodes) return true;
  if (selection.nodeSelector) return selectsNode(*selection.nodeSelector, node, labels);
  return false;
}

Result<bool> deviceSelected(const ResourceSlice& slice, const Device& device, std::string_view node,
                            const StringMap& labels) {
  if (device.nodeSelection < 0) return false;
  return selects(slice.deviceSelections[static_cast<std::size_t>(device.nodeSelection)], node,
                 labels);
}

// Whether the slice serves the node (GatherPools' relevance test); nullopt for a slice that sets
// none of the selection fields (a future kind of slice: ignored).
Result<std::optional<bool>> relevant(const ResourceSlice& slice, std::string_view node,
                                     const StringMap& labels) {
  if (slice.selection.any()) {
    const Result<bool> match = selects(slice.selection, node, labels);
    if (!match.ok()) return match.error();
    return std::optional<bool>(*match);
  }
  if (!slice.perDeviceNodeSelection) return std::optional<bool>();
  for (const Device& device : slice.devices) {
    const Result<bool> match = deviceSelected(slice, device, node, labels);
    if (!match.ok()) return match.error();
    if (*match) return std::optional<bool>(true);
  }
  return std::optional<bool>(false);
}

// Keeps only the slices of the newest generation seen for the pool (addSlice).
void addSlice(std::map<PoolKey, Slices>& pools, const ResourceSliceConstSharedPtr& slice) {
  Slices& slices = pools[{slice->driver, slice->pool}];
  if (!slices.empty() && slice->generation < slices.front()->generation) return;
  if (!slices.empty() && slice->generation > slices.front()->generation) slices.clear();
  slices.push_back(slice);
}

struct CounterSetValues {
  std::string name;
  std::vector<PoolCounter> counters;
};

class PoolBuilder {
 public:
  PoolBuilder(NodeDevices& out, const AllocatedDevices& allocated, std::string_view node,
              const StringMap& labels, bool optionalNodeOperations)
      : out_(out),
        allocated_(allocated),
        node_(node),
        labels_(labels),
        optionalNodeOperations_(optionalNodeOperations) {}

  // buildPool: `targeting` are the pool's slices that serve the node; `all` the pool's slices of
  // that generation anywhere, when the pool was short of slices at first (else empty).
  void build(const PoolKey& key, Slices targeting, const Slices& all) {
    NodePool pool;
    pool.driver = key.first;
    pool.name = key.second;
    std::sort(targeting.begin(), targeting.end(),
              [](const auto& a, const auto& b) { return a->name < b->name; });
    Slices deviceSlices;
    Slices counterSlices;
    Slices notTargeting;
    for (const auto& slice : targeting) {
      (slice->sharedCounters.count > 0 ? counterSlices : deviceSlices).push_back(slice);
    }
    if (targeting.size() < all.size()) {
      std::set<std::string> names;
      for (const auto& slice : targeting)
        names.insert(slice->name);
      for (const auto& slice : all) {
        if (names.count(slice->name) != 0) continue;
        (slice->sharedCounters.count > 0 ? counterSlices : notTargeting).push_back(slice);
      }
    }
    std::vector<CounterSetValues> sets;
    if (!validate(pool, deviceSlices, counterSlices, notTargeting, sets)) {
      out_.pools.push_back(std::move(pool));
      return;
    }
    subtractAllocated(pool, deviceSlices, sets);
    subtractAllocated(pool, notTargeting, sets);
    for (CounterSetValues& set : sets) {
      for (PoolCounter& counter : set.counters)
        pool.counters.push_back(std::move(counter));
    }
    for (const auto& slice : deviceSlices) {
      for (const Device& device : slice->devices)
        pool.bindingConditions |= device.bindingConditions;
    }
    out_.pools.push_back(std::move(pool));
    deviceSlices_.push_back(std::move(deviceSlices));
    poolOfSlices_.push_back(out_.pools.size() - 1);
    for (const auto& slice : counterSlices)
      out_.slices.push_back(slice);
    for (const auto& slice : notTargeting)
      out_.slices.push_back(slice);
  }

  void incomplete(const PoolKey& key) {
    NodePool pool;
    pool.driver = key.first;
    pool.name = key.second;
    pool.incomplete = true;
    out_.pools.push_back(std::move(pool));
  }

  // Sorts the pools and lists their devices in the allocator's order.
  void finish() {
    std::vector<std::size_t> order(out_.pools.size());
    for (std::size_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const NodePool& x = out_.pools[a];
      const NodePool& y = out_.pools[b];
      if (x.bindingConditions != y.bindingConditions) return y.bindingConditions;
      return std::tie(x.driver, x.name) < std::tie(y.driver, y.name);
    });
    std::vector<NodePool> sorted;
    std::vector<std::size_t> newIndex(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      newIndex[order[i]] = i;
      sorted.push_back(std::move(out_.pools[order[i]]));
    }
    out_.pools = std::move(sorted);
    std::vector<std::size_t> byPool(out_.pools.size(), deviceSlices_.size());
    for (std::size_t i = 0; i < poolOfSlices_.size(); ++i)
      byPool[newIndex[poolOfSlices_[i]]] = i;
    for (std::size_t p = 0; p < out_.pools.size(); ++p) {
      if (byPool[p] == deviceSlices_.size()) continue;
      for (const auto& slice : deviceSlices_[byPool[p]])
        addDevices(slice, p);
    }
  }

 private:
  bool invalid(NodePool& pool, std::string reason) {
    pool.invalid = true;
    pool.invalidReason = std::move(reason);
    return false;
  }

  bool validate(NodePool& pool, const Slices& deviceSlices, const Slices& counterSlices,
                const Slices& notTargeting, std::vector<CounterSetValues>& sets) {
    std::set<std::string_view> names;
    for (const auto& slice : deviceSlices) {
      for (std::uint32_t d = 0; d < slice->devices.size(); ++d) {
        if (!names.insert(slice->deviceName(d)).second) {
          return invalid(pool, "duplicate device name " + std::string(slice->deviceName(d)));
        }
      }
    }
    for (const auto& slice : counterSlices) {
      const Range range = slice->sharedCounters;
      for (std::uint32_t g = range.first; g < range.first + range.count; ++g) {
        const CounterGroup& group = slice->counterGroups[g];
        CounterSetValues set;
        set.name = std::string(slice->view(group.counterSet));
        for (const CounterSetValues& other : sets) {
          if (other.name == set.name)
            return invalid(pool, "duplicate counter set name " + set.name);
        }
        for (std::uint32_t c = group.counters.first;
             c < group.counters.first + group.counters.count; ++c) {
          const StoredQuantity& counter = slice->quantities[c];
          set.counters.push_back(
              {set.name, std::string(slice->view(counter.name)), counter.value, counter.value});
        }
        sets.push_back(std::move(set));
      }
    }
    for (const Slices* group : {&deviceSlices, &notTargeting}) {
      for (const auto& slice : *group) {
        if (std::string reason = unknownCounters(*slice, sets); !reason.empty()) {
          return invalid(pool, reason);
        }
      }
    }
    return true;
  }

  static PoolCounter* findCounter(std::vector<CounterSetValues>& sets, std::string_view set,
                                  std::string_view name) {
    for (CounterSetValues& s : sets) {
      if (s.name != set) continue;
      for (PoolCounter& c : s.counters) {
        if (c.name == name) return &c;
      }
    }
    return nullptr;
  }

  // Consumption of a counter set or counter the pool does not have.
  static std::string unknownCounters(const ResourceSlice& slice,
                                     std::vector<CounterSetValues>& sets) {
    for (const Device& device : slice.devices) {
      const Range uses = device.consumesCounters;
      for (std::uint32_t g = uses.first; g < uses.first + uses.count; ++g) {
        const CounterGroup& group = slice.counterGroups[g];
        const std::string_view set = slice.view(group.counterSet);
        const bool setKnown = std::any_of(sets.begin(), sets.end(),
                                          [&](const CounterSetValues& s) { return s.name == set; });
        if (!setKnown) return "counter set " + std::string(set) + " not found";
        for (std::uint32_t c = group.counters.first;
             c < group.counters.first + group.counters.count; ++c) {
          const std::string_view name = slice.view(slice.quantities[c].name);
          if (findCounter(sets, set, name) == nullptr) {
            return "counter " + std::string(name) + " not found in counter set " + std::string(set);
          }
        }
      }
    }
    return {};
  }

  void subtractAllocated(const NodePool& pool, const Slices& slices,
                         std::vector<CounterSetValues>& sets) {
    for (const auto& slice : slices) {
      for (std::uint32_t d = 0; d < slice->devices.size(); ++d) {
        if (!allocated_.allocated(pool.driver, pool.name, slice->deviceName(d))) continue;
        const Range uses = slice->devices[d].consumesCounters;
        for (std::uint32_t g = uses.first; g < uses.first + uses.count; ++g) {
          const CounterGroup& group = slice->counterGroups[g];
          for (std::uint32_t c = group.counters.first;
               c < group.counters.first + group.counters.count; ++c) {
            const StoredQuantity& use = slice->quantities[c];
            if (PoolCounter* counter =
                    findCounter(sets, slice->view(group.counterSet), slice->view(use.name))) {
              counter->available -= use.value;
            }
          }
        }
      }
    }
  }

  void addDevices(const ResourceSliceConstSharedPtr& slice, std::size_t pool) {
    out_.slices.push_back(slice);
    // The experimental allocator skips such devices on a node that does not declare the feature.
    if (slice->skipNodeOperations && !optionalNodeOperations_) return;
    const NodePool& p = out_.pools[pool];
    for (std::uint32_t d = 0; d < slice->devices.size(); ++d) {
      if (slice->perDeviceNodeSelection) {
        const Result<bool> selected = deviceSelected(*slice, slice->devices[d], node_, labels_);
        if (!selected.ok()) {
          out_.error = "slice " + slice->name + ": " + selected.error().message;
          continue;
        }
        if (!*selected) continue;
      }
      NodeDevice device;
      device.slice = slice.get();
      device.index = d;
      device.pool = static_cast<std::uint16_t>(pool);
      device.inUse = allocated_.exclusive(p.driver, p.name, slice->deviceName(d));
      const Device& published = slice->devices[d];
      device.plain = published.taints.count == 0 && published.consumesCounters.count == 0 &&
                     !published.allowMultipleAllocations;
      device.capacityPlain =
          !published.allowMultipleAllocations && capacityWithoutPolicies(*slice, published);
      if (const auto* shares = allocated_.shares(p.driver, p.name, slice->deviceName(d))) {
        device.shares = static_cast<std::int32_t>(out_.shareUse.size());
        std::vector<Quantity>& use = out_.shareUse.emplace_back(published.capacity.count);
        for (const DeviceShare& share : *shares) {
          const std::vector<Quantity> consumed = shareConsumption(*slice, published, share);
          for (std::size_t c = 0; c < use.size(); ++c)
            use[c] += consumed[c];
        }
      }
      out_.devices.push_back(device);
    }
  }

  NodeDevices& out_;
  const AllocatedDevices& allocated_;
  std::string_view node_;
  const StringMap& labels_;
  bool optionalNodeOperations_;
  std::vector<Slices> deviceSlices_;       // per built pool
  std::vector<std::size_t> poolOfSlices_;  // the pool index each entry above belongs to
};

}  // namespace

std::vector<Quantity> shareConsumption(const ResourceSlice& slice, const Device& device,
                                       const DeviceShare& share) {
  std::vector<Quantity> out;
  out.reserve(device.capacity.count);
  for (std::uint32_t c = device.capacity.first; c < device.capacity.first + device.capacity.count;
       ++c) {
    out.push_back(share.consumed.get(slice.view(slice.quantities[c].name)));
  }
  return out;
}

bool NodeDevices::anyIncompleteOrInvalid() const noexcept {
  return std::any_of(pools.begin(), pools.end(),
                     [](const NodePool& p) { return p.incomplete || p.invalid; });
}

NodeDevices gatherNodeDevices(std::string_view nodeName, const StringMap& nodeLabels,
                              const SliceIndex& index, const AllocatedDevices& allocated,
                              bool optionalNodeOperations) {
  NodeDevices out;
  Slices candidates = index.onNode(nodeName);
  for (auto& slice : index.unpinned())
    candidates.push_back(std::move(slice));
  std::map<PoolKey, Slices> pools;
  for (const auto& slice : candidates) {
    // The compatibility-groups gate is off: such slices are ignored (their pool then looks short
    // of slices and is incomplete).
    if (usesCompatibilityGroups(*slice)) continue;
    const auto isRelevant = relevant(*slice, nodeName, nodeLabels);
    if (!isRelevant.ok()) {
      out.error = "slice " + slice->name + ": " + isRelevant.error().message;
      return out;
    }
    if (isRelevant->value_or(false)) addSlice(pools, slice);
  }
  PoolBuilder builder(out, allocated, nodeName, nodeLabels, optionalNodeOperations);
  for (auto& [key, slices] : pools) {
    const std::int64_t generation = slices.front()->generation;
    const auto expected =
        static_cast<std::size_t>(std::max<std::int64_t>(0, slices.front()->resourceSliceCount));
    if (slices.size() == expected) {
      builder.build(key, std::move(slices), {});
      continue;
    }
    // Short of slices for this node: count the pool's slices of that generation anywhere.
    Slices all;
    bool obsolete = false;
    for (auto& slice : index.inPool(key.first, key.second)) {
      if (slice->generation > generation) obsolete = true;
      if (slice->generation == generation && !usesCompatibilityGroups(*slice)) {
        all.push_back(std::move(slice));
      }
    }
    if (obsolete) continue;  // the driver is replacing this generation: the pool is ignored
    if (all.size() != expected) {
      builder.incomplete(key);
      continue;
    }
    builder.build(key, std::move(slices), all);
  }
  builder.finish();
  return out;
}

}  // namespace gte::dra
