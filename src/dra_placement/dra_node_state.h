#pragma once
// What the decision core keeps of a DRA node (docs/dra.md): its devices in the structured
// allocator's order, what each DeviceClass selects of them, which GPU of the topology graph each
// device is, and the order in which the allocator hands out whole GPUs for `nvidia.com/gpu` (the
// extended resource a DeviceClass backs, KEP-5004). Built when the node's slices, the devices
// allocated from them or the classes change (the snapshot's precompute); a request only reads it:
// the common `nvidia.com/gpu: N` pod through the node state's precomputed picks, a claim pod
// through one first-fit over `devices`.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dra/allocated_devices.h"
#include "dra/class_catalog.h"
#include "dra/gpu_mapping.h"
#include "dra/node_devices.h"
#include "dra/slice_index.h"
#include "model/node_info.h"
#include "topology/gpu_topology.h"

namespace gte {

// The extended resource the NVIDIA device plugin serves and a DRA class may back.
inline constexpr std::string_view kDraGpuExtendedResource = "nvidia.com/gpu";

struct DraNodeState {
  dra::NodeDevices devices;
  dra::ClassCatalogConstSharedPtr catalog;  // the classes `classMatches` is indexed by
  dra::ClassMatches classMatches;
  dra::GpuMapping mapping;
  // Per device (in order): its role and GPU index (-1: none), as a request reads them. The
  // mapping's, or on a mapping error each whole-GPU device's ordinal: counts stay right, links
  // and NUMA are then unknown.
  std::vector<dra::DeviceGpu> deviceGpus;
  bool topologyUnknown = false;  // the mapping failed: links and NUMA of DRA GPUs are unknown
  // The node hands out nvidia.com/gpu through DRA: it has whole-GPU devices and no device-plugin
  // allocatable for it. `plainClass` is the class that backs the resource (-1: none, so such
  // pods cannot fit here), `plainOrder` the GPUs of the whole-GPU devices it selects in device
  // order, `plainTaken` those the allocator would skip now (in use, counters spent, tainted).
  bool handsOutGpus = false;
  int plainClass = -1;
  // The class backing nvidia.com/gpu cannot be evaluated on some whole-GPU device (a selector
  // outside the CEL subset, a runtime error), or two requests could share one of its devices
  // (consumable capacity): such pods get no verdict or score on this node.
  bool plainUninterpretable = false;
  std::vector<int> plainOrder;
  GpuMask plainTaken = 0;
  GpuMask plainBlocked = 0;  // skipped even with no claim holding anything (tainted, counters)
  // Whole GPUs held by allocated DRA devices (whole or MIG, taken or shared), and the MIG devices
  // on the node.
  GpuMask gpusInUse = 0;
  // GPUs of whole-GPU or MIG devices with a device taint of effect None: a warning the driver or
  // an admin's DeviceTaintRule puts on hardware that still works, read as a degraded GPU
  // (docs/health.md). NoSchedule and NoExecute taints keep the device from the allocator instead.
  GpuMask degradedGpus = 0;
  int migDevices = 0;
  int migDevicesInUse = 0;
  // The pods (UIDs) the claim holding each device in use is reserved for: preempt's what-if frees
  // a device when all of them are victims. By device position.
  std::vector<std::pair<std::uint32_t, std::vector<std::string>>> holders;
  // Each allocated share of a device (consumable capacity): the pods its claim is reserved for
  // and what it consumes per capacity. The what-if gives a share back when all its pods are
  // victims, and frees the device (its counters) when no share is left.
  struct ShareHold {
    std::uint32_t position = 0;
    std::vector<std::string> pods;
    std::vector<Quantity> consumed;
  };
  std::vector<ShareHold> shareHolds;

  std::size_t devicePosition(std::string_view pool, std::string_view device) const noexcept;
};

using DraNodeStateConstSharedPtr = std::shared_ptr<const DraNodeState>;

// Preempt's what-if: the node's DRA state with the devices only these pods hold freed (their
// counters given back). Devices held by unknown pods, or also by others, stay in use.
DraNodeStateConstSharedPtr draStateWithout(const DraNodeStateConstSharedPtr& state,
                                           const std::vector<std::string>& podUids);

// The node's DRA state with the GPUs of `gpus` taken as well: every whole-GPU and MIG device of
// them counts as in use, so a first-fit skips them. A group's holds and the members a planner,
// a what-if or a simulator places one after another take GPUs no claim holds yet (no counter is
// consumed: the devices that share a GPU's counters are that GPU's own, all taken here). The same
// state when nothing changes.
DraNodeStateConstSharedPtr draStateTaking(const DraNodeStateConstSharedPtr& state, GpuMask gpus);

// The first k GPUs of `order` (a plain order) that are in `available`; 0 when fewer than k are:
// what the DRA allocator takes for `nvidia.com/gpu: k` on a node whose free GPUs are `available`.
GpuMask firstInDraOrder(std::span<const int> order, GpuMask available, int k) noexcept;

// Null when no slice serves the node (it has no DRA devices at all).
DraNodeStateConstSharedPtr buildDraNodeState(const NodeInfo& node, const GpuTopology& topology,
                                             const dra::SliceIndex& slices,
                                             const dra::AllocatedDevices& allocated,
                                             dra::ClassCatalogConstSharedPtr catalog);

}  // namespace gte
