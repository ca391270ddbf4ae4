#pragma once
// The ResourceSlice of companion devices the agent publishes with --companion-slice (docs/dra.md,
// "NVLink islands"): under a DRA driver of its own, one device per GPU carrying the GPU's PCI bus
// id (the standard `resource.kubernetes.io/pciBusID`, as the NVIDIA DRA driver publishes it) and
// its NVLink island, so that a claim can tie each GPU to its companion by `matchAttribute` on the
// bus id and ask for one island by `matchAttribute` on `<driver>/nvlinkIsland`.
//
// Pure: the devices from a discovery, the slice as JSON, and the few fields the agent reads back
// from the API server's copy (a parser of outside input: fuzz/companion_slice.cpp).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agent/discovery.h"
#include "base/result.h"

namespace gte::agent {

inline constexpr std::string_view kDefaultCompanionDriver = "topology.gputopo.dev";

struct CompanionDevice {
  int gpu = 0;           // NVML index: device `gpu-<index>`, attribute `gpuIndex`
  std::string pciBusId;  // "0000:18:00.0" (lowercase, 4-digit domain)
  int island = 0;        // `nvlinkIsland`: the lowest GPU index of its island
  int islandSize = 1;    // `nvlinkIslandSize`
  std::string uuid;      // `uuid` ("GPU-..."); empty: not published
  friend bool operator==(const CompanionDevice&, const CompanionDevice&) = default;
};

// One device per GPU, islands from topology/nvlink_islands.h. An error when the discovery has no
// PCI bus id for a GPU (text captures carry none) or one that does not parse.
Result<std::vector<CompanionDevice>> companionDevices(const Discovery& discovery);

// "<node>-<driver>"; an error when longer than an object name may be (253).
Result<std::string> companionSliceName(const std::string& node, const std::string& driver);

// A DRA driver name: a lowercase DNS subdomain of at most 63 characters (the API's limit).
bool validDriverName(std::string_view driver) noexcept;

struct CompanionSlice {
  std::string name;
  std::string node;
  std::string nodeUid;  // the ownerReference: the slice goes when the Node goes
  std::string driver;
  std::string labelPrefix;  // `<prefix>companion-digest` annotation
  std::int64_t generation = 1;
  std::string resourceVersion;  // set: an update (PUT) of that version
  std::vector<CompanionDevice> devices;
};

// What the slice says, reduced to a digest of driver, node and devices: equal digests, equal
// content (the annotation the agent compares instead of parsing devices back).
std::string companionDigest(const std::string& node, const std::string& driver,
                            const std::vector<CompanionDevice>& devices);

// The resource.k8s.io/v1 ResourceSlice: pool = node name, `nodeName`, `resourceSliceCount` 1,
// `skipNodeOperations: ["*"]`, the ownerReference and the digest annotation.
std::string companionSliceJson(const CompanionSlice& slice);

// What the agent reads of the API server's copy.
struct StoredSlice {
  std::string resourceVersion;
  std::int64_t generation = 0;
  std::string digest;                // the annotation; empty when absent
  bool skipsNodeOperations = false;  // spec.skipNodeOperations holds "*"
};

// Reads a ResourceSlice object; `digestKey` is the annotation's key. Errors name the field.
Result<StoredSlice> readStoredSlice(std::string_view json, std::string_view digestKey);

}  // namespace gte::agent
