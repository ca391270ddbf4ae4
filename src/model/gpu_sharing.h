#pragma once
// How the NVIDIA device plugin shares a node's whole GPUs among pods (time-slicing, MPS), as a
// value, and the node agent's labels-v1 `sharing` codec for it. The rules that read a node's
// sharing from its labels and allocatable are core/gpu_sharing.h; the agent reads the plugin's
// configuration into this value (agent/device_plugin_config.h). Pure.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

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

}  // namespace gte
