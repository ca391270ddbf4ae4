#pragma once
// How the NVIDIA device plugin shares a node's whole GPUs among pods (time-slicing, MPS), as a
// value, and the node agent's labels-v1 `sharing` codec for it. The rules that read a node's
// sharing from its labels and allocatable are core/gpu_sharing.h; the agent reads the plugin's
// configuration into this value (agent/device_plugin_config.h). Pure.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/string_map.h"

namespace gte {

enum class SharingStrategy : std::uint8_t {
  kNone,         // each nvidia.com/gpu is a whole GPU
  kTimeSlicing,  // replicas share memory and faults
  kMps,          // replicas share a fault domain; memory and compute limited per client
  kUnknown,      // shared by a means the labels do not name, or labels that do not read
};

std::string_view sharingStrategyName(SharingStrategy strategy) noexcept;
// `none`, `time-slicing` or `mps` (GFD's names, and the plugin configuration's); nullopt otherwise.
std::optional<SharingStrategy> sharingStrategyFromName(std::string_view name) noexcept;

struct GpuSharing {
  SharingStrategy strategy = SharingStrategy::kNone;
  std::uint16_t replicas = 0;  // per physical GPU; 0: not known
  // The device plugin's `failRequestsGreaterThanOne` for the strategy, as the node agent read it
  // from the plugin's configuration (labels-v1 `sharing`); nullopt when not published. Set, the
  // plugin's Allocate refuses a container that asks for more than one replica.
  std::optional<bool> failRequestsGreaterThanOne;
  // Set when the labels do not read (the node is then treated as shared): what was read, for the
  // log and the refusal's reason.
  std::string unreadable;

  bool shared() const noexcept { return strategy != SharingStrategy::kNone; }
  // The plugin admits at most one replica per container: always under MPS (v0.15 to v0.17 force
  // the flag on for MPS; later releases default it on), under time-slicing when the flag is set.
  bool oneReplicaPerContainer() const noexcept {
    return strategy == SharingStrategy::kMps || (strategy == SharingStrategy::kTimeSlicing &&
                                                 failRequestsGreaterThanOne.value_or(false));
  }
  friend bool operator==(const GpuSharing&, const GpuSharing&) = default;
};

// The node agent's reading of the device plugin's configuration (labels-v1 `sharing`, under the
// policy's label prefix): `none`, or `<strategy>.<replicas>` with `.f` when
// failRequestsGreaterThanOne is on: `time-slicing.4`, `time-slicing.4.f`, `mps.2.f`.
inline constexpr std::string_view kAgentSharingKey = "sharing";

// The agent's `sharing` value, or nullopt when it does not read.
std::optional<GpuSharing> parseAgentSharing(std::string_view value);
// The value for a sharing (the agent writes it; parseAgentSharing reads it back): `none` unless
// the strategy is named and the replicas are 2 or more.
std::string formatAgentSharing(const GpuSharing& sharing);

// A sharing that does not read (treated as shared by an unknown strategy), with what was read.
GpuSharing unreadableSharing(std::string what);

// GPU Feature Discovery's pair for one resource, `<resource>.sharing-strategy` and
// `<resource>.replicas` (either may be null when absent), named by their keys in what a pair that
// does not read reports. Only the replicas (releases before the strategy label): more than one is
// sharing by a strategy not named; `none` with more than one replica does not read.
GpuSharing readGfdSharing(const std::string* strategy, const std::string* replicas,
                          std::string_view strategyKey, std::string_view replicasKey);

// One MIG profile whose devices the device plugin shares among pods (`sharing.timeSlicing` or
// `sharing.mps` listing nvidia.com/mig-<profile>): each MIG device is then advertised `replicas`
// times and its memory and faults are shared by its tenants.
struct SharedMigProfile {
  std::string profile;  // resource suffix: "1g.10gb" as in nvidia.com/mig-1g.10gb
  GpuSharing sharing;
  friend bool operator==(const SharedMigProfile&, const SharedMigProfile&) = default;
};

// The MIG profiles whose devices are shared, sorted by profile, from what GFD writes per resource
// under the plugin's `mixed` MIG strategy (`nvidia.com/mig-<profile>.sharing-strategy` and
// `.replicas`, read by readGfdSharing). A pair that does not read makes its profile shared by an
// unknown strategy. MIG devices the labels say nothing of are read as not shared. The extender's
// node state and the agent's MIG usage both read them here.
std::vector<SharedMigProfile> readMigSharing(const StringMap& labels);

}  // namespace gte
