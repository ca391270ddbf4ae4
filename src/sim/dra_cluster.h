#pragma once
// The simulator's DRA mode (docs/placement-quality.md, "DRA"): every node's GPUs are published by
// the NVIDIA DRA driver (`gpu.nvidia.com`) as one ResourceSlice: one pool named after the node,
// whole-GPU devices `gpu-<index>` (the simulated machines' minor numbers equal their indices) with
// `type`, `productName`, `resource.kubernetes.io/pcieRoot` and `resource.kubernetes.io/numaNode`,
// listed in the order the driver's map iteration left them. The driver chart's DeviceClass
// `gpu.nvidia.com` backs `nvidia.com/gpu` (KEP-5004) and no node advertises device-plugin GPUs, so
// a pod's GPUs are a claim kube-scheduler's DRA allocator fills first-fit. The device choice inside
// a node is the first-fit replica of src/dra; the node states the choosers see are built from the
// same slices and allocations the way the extender's snapshot builds them (buildDraNodeState).
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dra/allocated_devices.h"
#include "dra/class_catalog.h"
#include "dra/first_fit.h"
#include "dra/slice_index.h"
#include "dra_placement/dra_demand.h"
#include "dra_placement/dra_node_state.h"
#include "model/node_info.h"
#include "sim/node_template.h"

namespace gte::sim {

// How a node's slice lists its GPUs.
enum class DraDeviceOrder : std::uint8_t {
  kOff,       // no DRA: the NVIDIA device plugin hands out GPUs (the default)
  kIndex,     // gpu-0, gpu-1, ...: worked examples and tests
  kShuffled,  // a seeded random order per node: what the driver publishes (a Go map iteration)
};
std::string_view draDeviceOrderName(DraDeviceOrder order) noexcept;
std::optional<DraDeviceOrder> draDeviceOrderFromName(std::string_view name) noexcept;

// How a pod of 2+ GPUs asks for them in DRA mode (1-GPU pods always use nvidia.com/gpu).
enum class DraPodForm : std::uint8_t {
  kExtendedResource,  // nvidia.com/gpu: N, the scheduler's claim of N devices (no constraints)
  kClaimTemplate,     // a claim from `claim-template --gpus N` (dra/claim_shaping.h): tiers
};
std::string_view draPodFormName(DraPodForm form) noexcept;
std::optional<DraPodForm> draPodFormFromName(std::string_view name) noexcept;

// The PCIe root complex of each GPU of a template, numbered by each root's lowest GPU: a pair
// whose `pci` level is same board, PIX, PXB or PHB meets below one host bridge, so both GPUs
// share the root; NODE and SYS pairs do not.
std::vector<int> pcieRootGroups(const NodeTemplate& machine);

// The ResourceSlice (JSON) the driver publishes for a node of this template, GPUs listed in
// `order` (a permutation of the GPU indices).
std::string templateSliceJson(const NodeTemplate& machine, const std::string& nodeName,
                              std::span<const int> order);

// A template node as a DRA node carries it: labels-v1 as the agent writes them, and no
// allocatable nvidia.com/gpu (no device plugin runs there).
NodeInfo makeDraTemplateNode(const NodeTemplate& machine, const std::string& nodeName,
                             const std::string& labelPrefix);

// The cluster's DRA objects: every node's slice, the devices claims hold, and the chart's classes.
class SimDraCluster {
 public:
  SimDraCluster();

  void publish(const NodeTemplate& machine, const std::string& nodeName,
               std::span<const int> order);
  // The node's DRA state with the devices allocated so far.
  DraNodeStateConstSharedPtr nodeState(const NodeInfo& node, const GpuTopology& topology) const;
  // Marks the devices a first-fit picked on this node as allocated (the claim's status): whole,
  // or as a share consuming what the result says.
  void allocate(const dra::NodeDevices& devices, const dra::FirstFitResult& picked);
  // The pod's claim released (it ended, or its gang was rolled back): the whole-GPU devices of
  // `gpus` on the node are free again (devices are `gpu-<index>` in the node's pool).
  void release(const std::string& nodeName, GpuMask gpus);

  // The claim the allocator fills for a pod of `gpus` GPUs asking in `form` (cached per count).
  const dra::ClaimProgram& claim(DraPodForm form, int gpus);
  // The claim-template form as the extender reads the pod's demand.
  DraDemandConstSharedPtr templateDemand(int gpus);

  const dra::ClassCatalogConstSharedPtr& catalog() const noexcept { return catalog_; }
  // The class backing nvidia.com/gpu (the chart's `gpu.nvidia.com`).
  int gpuClass() const noexcept { return gpuClass_; }

 private:
  dra::SliceIndex slices_;
  dra::AllocatedDevices allocated_;
  dra::ClassCatalogConstSharedPtr catalog_;
  int gpuClass_ = -1;
  std::map<std::pair<DraPodForm, int>, dra::ClaimProgram> claims_;
  std::map<int, DraDemandConstSharedPtr> demands_;
};

}  // namespace gte::sim
