#pragma once
// Claim shaping (docs/dra.md, "Claim shaping"): "N GPUs" as a ResourceClaimTemplate whose one
// request is a `firstAvailable` list of tiers, each N devices of the class, constrained to a
// better-connected set than the next:
//   nvswitch-partition  matchAttribute gpu.nvidia.com/partition<N> (optional: NVIDIA Fabric
//                       Manager partitions, published by the driver's FabricManagerPartitioning
//                       gate; later tiers then select only GPUs without that attribute, since such
//                       GPUs can only be prepared as one whole partition)
//   same-pcie-root      matchAttribute resource.kubernetes.io/pcieRoot
//   same-numa-node      matchAttribute resource.kubernetes.io/numaNode
//   any                 no constraint
// The scheduler's DRA allocator takes, per node, the first tier it can satisfy (and scores nodes
// by it), so the device set is the best-connected one these attributes can name. One GPU needs no
// tiers: a plain `exactly` request.
//
// With `nvlinkIsland` the template asks instead for N GPUs of one NVLink island (docs/dra.md,
// "NVLink islands"): requests gpu-0, link-0, ..., gpu-(N-1), link-(N-1), each one device, gpu-i of
// the GPU class, link-i of the companion class the node agent publishes; constraints tie each
// [gpu-i, link-i] by `resource.kubernetes.io/pciBusID` (link-i is gpu-i's companion) and every
// link-* by `<companion driver>/nvlinkIsland`. Interleaved so that first-fit checks each GPU's
// island as soon as it takes it. No fallback tier: `firstAvailable` alternatives are single
// requests, and putting it on each link-i would let the allocator mix island and non-island
// companions in one claim.
//
// Pure: builds the claim spec and its text (YAML as kubectl applies it, or JSON).
#include <string>

#include "base/result.h"
#include "dra/resource_claim.h"

namespace gte::dra {

struct ShapedClaimOptions {
  int gpus = 0;      // 1..32
  std::string name;  // the template's name; empty: "gpus-<N>"
  std::string ns;    // metadata.namespace; empty: not written
  std::string deviceClass = "gpu.nvidia.com";
  bool nvswitchPartition = false;  // add the Fabric Manager partition tier
  bool nvlinkIsland = false;       // one NVLink island through companion devices (N = 2..16)
  std::string companionClass = "topology.gputopo.dev";   // DeviceClass of companion devices
  std::string companionDriver = "topology.gputopo.dev";  // their driver: the attribute domain
};

// The one request's name; tiers are "gpus/<tier>" in constraints and allocation results.
inline constexpr std::string_view kShapedRequestName = "gpus";

// The companion devices' island attribute (its id within the companion driver's domain) and the
// standard attribute that ties a companion to its GPU.
inline constexpr std::string_view kNvlinkIslandAttribute = "nvlinkIsland";
inline constexpr std::string_view kPciBusIdAttribute = "resource.kubernetes.io/pciBusID";

// Errors name the option: "--gpus: want 1 to 32, got 0".
Result<ClaimSpec> shapedClaimSpec(const ShapedClaimOptions& options);

// The ResourceClaimTemplate (resource.k8s.io/v1) holding `spec`, as YAML or compact JSON.
std::string claimTemplateYaml(const ShapedClaimOptions& options, const ClaimSpec& spec);
std::string claimTemplateJson(const ShapedClaimOptions& options, const ClaimSpec& spec);

}  // namespace gte::dra
