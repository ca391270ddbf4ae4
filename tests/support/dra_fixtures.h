#pragma once
// The DRA objects under tests/data/dra (ResourceSlices as the NVIDIA DRA driver publishes them,
// its chart's DeviceClasses, claims and a template), loaded with the extender's own readers.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/node_charges.h"
#include "core/node_state.h"
#include "dra/allocated_devices.h"
#include "dra/device_class.h"
#include "dra/dra_objects.h"
#include "dra/resource_claim.h"
#include "dra/resource_slice.h"
#include "dra/slice_index.h"
#include "dra_placement/dra_node_state.h"
#include "model/node_info.h"
#include "model/pod_info.h"
#include "policy/policy.h"

namespace gte::testing {

// The file's text; throws when it cannot be read (a broken checkout, not a test outcome).
std::string draFixtureText(const std::string& file);

dra::ResourceSliceConstSharedPtr draSlice(const std::string& file);
// Every item of a DeviceClassList file.
std::vector<dra::DeviceClassConstSharedPtr> draClasses(const std::string& file);
dra::ResourceClaimConstSharedPtr draClaim(const std::string& file);
dra::ResourceClaimTemplateConstSharedPtr draTemplate(const std::string& file);

}  // namespace gte::testing

namespace gte::testing {

// A ResourceSlice as JSON: `devices` is the JSON array of devices; `spec` adds spec fields
// (e.g. R"("allNodes":true)" in place of the node name when `node` is empty).
std::string draSliceJson(const std::string& name, const std::string& node, const std::string& pool,
                         const std::string& devices, const std::string& spec = "",
                         int generation = 1, int sliceCount = 1);
// A `gpu.nvidia.com` whole-GPU device with the attributes the NVIDIA driver publishes that
// placement reads.
std::string draGpuDevice(const std::string& name, int numa, const std::string& pcieRoot,
                         const std::string& extra = "");

// The slice of a DGX-1V (makeDgx1Volta) on a DRA node `node`: gpu-<n> listed in `order` (mapped
// by name), NUMA n / 4, PCIe root n / 2.
std::string draDgx1Slice(const std::string& node, const std::vector<int>& order);

// A claim of `count` GPUs of the NVIDIA GPU class (`gpu.nvidia.com`) in namespace `ml`, as the
// API server would hold it before allocation.
dra::ResourceClaimConstSharedPtr draGpuClaim(const std::string& name, int count);

// The HGX H100 slice with its first device, gpu-1 (GPU 5), shareable: its 81559Mi of memory are
// taken in shares (consumable capacity).
std::string draSharedH100SliceJson();
// ml/<name>: one gpu.nvidia.com device with `memory` of its capacity; with `heldBy`, allocated as
// a share of hgx-h100-a's gpu-1 consuming that much, reserved for pod <heldBy> (uid-<heldBy>).
dra::ResourceClaimConstSharedPtr draMemoryClaim(const std::string& name, const std::string& memory,
                                                const std::string& heldBy = "");

}  // namespace gte::testing

namespace gte::testing {

// A DRA cluster in one object: slices, allocated devices, the NVIDIA chart's classes and the
// claims and templates a pod's demand is resolved against, with the node states built from them
// as the snapshot builds them (readNodeState, buildDraNodeState, chargeNodeState).
struct DraCluster {
  DraCluster();

  dra::SliceIndex slices;
  dra::AllocatedDevices allocated;
  dra::ClassCatalogConstSharedPtr classes;
  std::shared_ptr<dra::DraObjectMaps> objects;

  void addSlice(const std::string& file);
  void addSliceJson(const std::string& json);
  // Adds the claim to the objects and, when allocated, its devices to the allocated state.
  void addClaim(const dra::ResourceClaimConstSharedPtr& claim);
  NodeStateConstSharedPtr nodeState(const NodeInfo& node, const Policy& policy,
                                    NodeChargesConstSharedPtr charges = nullptr) const;
};

// A pod with `spec.resourceClaims` entries {name, claim} (resourceClaimName) and optional
// {name, template} entries with their status claim names ("" when not made yet).
PodInfo makeClaimPod(const std::string& name, const std::string& ns,
                     const std::vector<std::pair<std::string, std::string>>& claims,
                     const std::vector<std::pair<std::string, std::string>>& templates = {},
                     const std::vector<std::pair<std::string, std::string>>& statuses = {});

}  // namespace gte::testing
