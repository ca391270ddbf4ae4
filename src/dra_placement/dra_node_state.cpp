#include "dra_placement/dra_node_state.h"

#include <algorithm>

#include "dra/slice_device.h"
#include "model/gpu_request.h"
#include "topology/pair_table.h"

namespace gte {
namespace {

// A device the allocator could hand out alone, before any claim of the pod: free, its counters
// available, no taint a request without tolerations must respect, and (consumable capacity) room
// for a request that names no capacity beside the shares it holds.
// `emptied`: as if no claim held anything (in use and shares ignored, counters at their sets'
// values).
bool availableAlone(const dra::NodeDevices& devices, const dra::NodeDevice& nd, bool emptied) {
  if (nd.inUse && !emptied) return false;
  const dra::ResourceSlice& slice = *nd.slice;
  const dra::Device& device = slice.devices[nd.index];
  const bool shared = nd.shares >= 0 && !emptied;
  if (!nd.capacityPlain || shared) {
    std::span<const Quantity> held;
    if (shared) held = devices.shareUse[static_cast<std::size_t>(nd.shares)];
    if (dra::checkCapacity(slice, device, {}, held).fit != dra::CapacityFit::kFits) return false;
  }
  for (std::uint32_t t = device.taints.first; t < device.taints.first + device.taints.count; ++t) {
    const dra::TaintEffect effect = slice.taints[t].effect;
    if (effect == dra::TaintEffect::kNoSchedule || effect == dra::TaintEffect::kNoExecute) {
      return false;
    }
  }
  // A further share of a device already shared is not charged its counters again.
  if (device.consumesCounters.count == 0 || (shared && device.allowMultipleAllocations)) {
    return true;
  }
  const dra::NodePool& pool = devices.pools[nd.pool];
  std::vector<Quantity> need(pool.counters.size());
  for (std::uint32_t g = device.consumesCounters.first;
       g < device.consumesCounters.first + device.consumesCounters.count; ++g) {
    const dra::CounterGroup& group = slice.counterGroups[g];
    for (std::uint32_t c = group.counters.first; c < group.counters.first + group.counters.count;
         ++c) {
      for (std::size_t k = 0; k < pool.counters.size(); ++k) {
        if (pool.counters[k].counterSet == slice.view(group.counterSet) &&
            pool.counters[k].name == slice.view(slice.quantities[c].name)) {
          need[k] += slice.quantities[c].value;
        }
      }
    }
  }
  for (std::size_t k = 0; k < pool.counters.size(); ++k) {
    if ((emptied ? pool.counters[k].total : pool.counters[k].available) < need[k]) return false;
  }
  return true;
}

// A device carrying a taint of effect None (or one this reader does not know, which the API says
// to treat like None): it may be allocated, but something is wrong with it.
bool warnsOnly(const dra::NodeDevice& nd) {
  const dra::ResourceSlice& slice = *nd.slice;
  const dra::Device& device = slice.devices[nd.index];
  for (std::uint32_t t = device.taints.first; t < device.taints.first + device.taints.count; ++t) {
    const dra::TaintEffect effect = slice.taints[t].effect;
    if (effect == dra::TaintEffect::kNone || effect == dra::TaintEffect::kOther) return true;
  }
  return false;
}

// What the devices in use mean for GPUs: GPUs held, MIG devices counted, the plain order and
// the GPUs in it the allocator would skip.
void deriveUsage(DraNodeState& state) {
  state.gpusInUse = 0;
  state.migDevices = 0;
  state.migDevicesInUse = 0;
  state.plainOrder.clear();
  state.plainTaken = 0;
  state.plainBlocked = 0;
  state.plainUninterpretable = false;
  state.degradedGpus = 0;
  const std::size_t n = state.devices.devices.size();
  for (std::size_t i = 0; i < n; ++i) {
    const int gpu = state.deviceGpus[i].gpu;
    if (gpu >= 0 && state.deviceGpus[i].role != dra::DeviceRole::kOther &&
        warnsOnly(state.devices.devices[i])) {
      state.degradedGpus |= bitOf(gpu);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const dra::DeviceRole role = state.deviceGpus[i].role;
    // A device with allocated shares is held too, though not whole (consumable capacity).
    const bool inUse = state.devices.devices[i].inUse || state.devices.devices[i].shares >= 0;
    if (role == dra::DeviceRole::kMig) {
      ++state.migDevices;
      if (inUse) ++state.migDevicesInUse;
    }
    if (inUse && state.deviceGpus[i].gpu >= 0 && role != dra::DeviceRole::kOther) {
      state.gpusInUse |= bitOf(state.deviceGpus[i].gpu);
    }
  }
  if (state.plainClass < 0) return;
  std::vector<std::string_view> counterSets;  // of the devices in the plain order
  for (std::size_t i = 0; i < n; ++i) {
    const int gpu = state.deviceGpus[i].gpu;
    const dra::CelOutcome selects = state.classMatches.at(state.plainClass, i);
    if (selects == dra::CelOutcome::kError || selects == dra::CelOutcome::kUninterpretable) {
      state.plainUninterpretable = true;
    }
    if (selects != dra::CelOutcome::kTrue || gpu < 0 ||
        state.deviceGpus[i].role != dra::DeviceRole::kWholeGpu) {
      continue;
    }
    // Two GPUs of the order drawing on one counter set: taking one can rule out the other, which
    // a precomputed order cannot tell. Such pods get no verdict (DynamicMIG GPUs each have their
    // own set; this guards other layouts).
    const dra::NodeDevice& nd = state.devices.devices[i];
    const dra::Device& published = nd.slice->devices[nd.index];
    for (std::uint32_t g = published.consumesCounters.first;
         g < published.consumesCounters.first + published.consumesCounters.count; ++g) {
      const std::string_view set = nd.slice->view(nd.slice->counterGroups[g].counterSet);
      if (std::find(counterSets.begin(), counterSets.end(), set) != counterSets.end()) {
        state.plainUninterpretable = true;
      }
      counterSets.push_back(set);
    }
    // A device two requests naming no capacity could share (no capacity, or a default of at most
    // half of each): N such requests need not take N GPUs, which the order cannot tell.
    if (published.allowMultipleAllocations) {
      const dra::CapacityUse one = dra::consumedByRequest(*nd.slice, published, {});
      if (one.fit == dra::CapacityFit::kFits &&
          dra::checkCapacity(*nd.slice, published, {}, one.consumed).fit ==
              dra::CapacityFit::kFits) {
        state.plainUninterpretable = true;
      }
    }
    state.plainOrder.push_back(gpu);
    if (!availableAlone(state.devices, nd, false)) state.plainTaken |= bitOf(gpu);
    if (!availableAlone(state.devices, nd, true)) state.plainBlocked |= bitOf(gpu);
  }
}

// The counters a device consumes, given back to its pool.
void giveBackCounters(dra::NodeDevices& devices, const dra::NodeDevice& nd) {
  const dra::ResourceSlice& slice = *nd.slice;
  const dra::Device& device = slice.devices[nd.index];
  dra::NodePool& pool = devices.pools[nd.pool];
  for (std::uint32_t g = device.consumesCounters.first;
       g < device.consumesCounters.first + device.consumesCounters.count; ++g) {
    const dra::CounterGroup& group = slice.counterGroups[g];
    for (std::uint32_t c = group.counters.first; c < group.counters.first + group.counters.count;
         ++c) {
      for (dra::PoolCounter& counter : pool.counters) {
        if (counter.counterSet == slice.view(group.counterSet) &&
            counter.name == slice.view(slice.quantities[c].name)) {
          counter.available += slice.quantities[c].value;
        }
      }
    }
  }
}

}  // namespace

DraNodeStateConstSharedPtr draStateWithout(const DraNodeStateConstSharedPtr& state,
                                           const std::vector<std::string>& podUids) {
  if (!state) return state;
  auto out = std::make_shared<DraNodeState>(*state);
  const auto allVictims = [&](const std::vector<std::string>& pods) {
    return !pods.empty() && std::all_of(pods.begin(), pods.end(), [&](const std::string& uid) {
      return std::find(podUids.begin(), podUids.end(), uid) != podUids.end();
    });
  };
  bool freed = false;
  for (const auto& [position, pods] : state->holders) {
    if (!allVictims(pods)) continue;
    dra::NodeDevice& device = out->devices.devices[position];
    device.inUse = false;
    giveBackCounters(out->devices, device);
    freed = true;
  }
  // Shares: each victim's share is given back; a device with none left is free again.
  out->shareHolds.clear();
  std::vector<std::uint32_t> stillShared;
  for (const DraNodeState::ShareHold& hold : state->shareHolds) {
    if (!allVictims(hold.pods)) {
      out->shareHolds.push_back(hold);
      stillShared.push_back(hold.position);
      continue;
    }
    const dra::NodeDevice& device = out->devices.devices[hold.position];
    std::vector<Quantity>& use = out->devices.shareUse[static_cast<std::size_t>(device.shares)];
    for (std::size_t c = 0; c < use.size() && c < hold.consumed.size(); ++c)
      use[c] -= hold.consumed[c];
    freed = true;
  }
  for (const DraNodeState::ShareHold& hold : state->shareHolds) {
    dra::NodeDevice& device = out->devices.devices[hold.position];
    if (device.shares < 0 ||
        std::find(stillShared.begin(), stillShared.end(), hold.position) != stillShared.end()) {
      continue;
    }
    device.shares = -1;
    giveBackCounters(out->devices, device);
  }
  if (!freed) return state;
  deriveUsage(*out);
  return out;
}

DraNodeStateConstSharedPtr draStateTaking(const DraNodeStateConstSharedPtr& state, GpuMask gpus) {
  if (!state) return state;
  const auto takes = [&](std::size_t i) {
    const dra::DeviceGpu& device = state->deviceGpus[i];
    return device.gpu >= 0 && device.gpu < kMaxGpus && device.role != dra::DeviceRole::kOther &&
           (gpus & bitOf(device.gpu)) != 0 && !state->devices.devices[i].inUse;
  };
  std::shared_ptr<DraNodeState> out;
  for (std::size_t i = 0; i < state->devices.devices.size() && i < state->deviceGpus.size(); ++i) {
    if (!takes(i)) continue;
    if (!out) out = std::make_shared<DraNodeState>(*state);
    out->devices.devices[i].inUse = true;
  }
  if (!out) return state;
  deriveUsage(*out);
  return out;
}

std::size_t DraNodeState::devicePosition(std::string_view pool,
                                         std::string_view device) const noexcept {
  for (std::size_t i = 0; i < devices.devices.size(); ++i) {
    const dra::NodeDevice& nd = devices.devices[i];
    if (nd.slice->pool == pool && nd.slice->deviceName(nd.index) == device) return i;
  }
  return devices.devices.size();
}

DraNodeStateConstSharedPtr buildDraNodeState(const NodeInfo& node, const GpuTopology& topology,
                                             const dra::SliceIndex& slices,
                                             const dra::AllocatedDevices& allocated,
                                             dra::ClassCatalogConstSharedPtr catalog) {
  auto state = std::make_shared<DraNodeState>();
  state->devices = dra::gatherNodeDevices(node.name, node.labels, slices, allocated,
                                          node.declaresDraOptionalNodeOperations);
  if (state->devices.pools.empty() && state->devices.error.empty()) return nullptr;
  state->catalog = catalog ? std::move(catalog) : std::make_shared<const dra::ClassCatalog>();
  state->classMatches = dra::matchClasses(state->devices, *state->catalog);
  const Quantity* allocatable = node.allocatable.find(kGpuResource);
  const bool devicePlugin = allocatable != nullptr && !allocatable->isZero();
  state->mapping = dra::mapGpuDevices(node.name, state->devices, topology, devicePlugin);
  state->topologyUnknown = !state->mapping.error.empty();

  state->deviceGpus = state->mapping.devices;
  int ordinal = 0;
  for (std::size_t i = 0; i < state->deviceGpus.size(); ++i) {
    dra::DeviceGpu& device = state->deviceGpus[i];
    if (state->topologyUnknown) {
      const bool counts = device.role == dra::DeviceRole::kWholeGpu && ordinal < kMaxGpus;
      device.gpu = counts ? static_cast<std::int8_t>(ordinal++) : std::int8_t{-1};
    }
    const dra::NodeDevice& nd = state->devices.devices[i];
    const std::string_view name = nd.slice->deviceName(nd.index);
    if (nd.inUse) {
      const auto* pods = allocated.holders(nd.slice->driver, nd.slice->pool, name);
      if (pods != nullptr && !pods->empty()) {
        state->holders.emplace_back(static_cast<std::uint32_t>(i), *pods);
      }
    }
    if (nd.shares >= 0) {
      for (const dra::DeviceShare& share :
           *allocated.shares(nd.slice->driver, nd.slice->pool, name)) {
        state->shareHolds.push_back(DraNodeState::ShareHold{
            static_cast<std::uint32_t>(i), share.holders,
            dra::shareConsumption(*nd.slice, nd.slice->devices[nd.index], share)});
      }
    }
  }
  const bool anyWhole =
      std::any_of(state->mapping.devices.begin(), state->mapping.devices.end(),
                  [](const dra::DeviceGpu& d) { return d.role == dra::DeviceRole::kWholeGpu; });
  state->handsOutGpus = anyWhole && !devicePlugin;
  if (state->handsOutGpus) {
    state->plainClass = state->catalog->forExtendedResource(kDraGpuExtendedResource);
  }
  deriveUsage(*state);
  return state;
}

GpuMask firstInDraOrder(std::span<const int> order, GpuMask available, int k) noexcept {
  GpuMask pick = 0;
  int taken = 0;
  for (const int gpu : order) {
    if (taken == k) break;
    if (gpu >= 0 && gpu < 32 && (available & bitOf(gpu)) != 0) {
      pick |= bitOf(gpu);
      ++taken;
    }
  }
  return taken == k ? pick : 0;
}

}  // namespace gte
