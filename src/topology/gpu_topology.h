#pragma once
// One node's GPUs as its labels describe them (labels-v1, or the GPU Feature Discovery fallback):
// plain data, no Boost, cheap to copy. Pair facts are stored in labels-v1 pair order.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "policy/link_class.h"
#include "topology/gpu_identity.h"

namespace gte {

// Exact set search and device-plugin prediction use bitmasks; no real node has more GPUs
// (DGX-2/HGX-2 have 16).
inline constexpr int kMaxGpus = 16;
using GpuMask = std::uint32_t;

// labels-v1 `health`: `1` healthy, `d` degraded (usable, avoided by multi-GPU sets), `0` failed
// (never allocated), `c` cordoned by an operator (never allocated). docs/health.md.
enum class GpuHealth : std::uint8_t { kHealthy, kUnhealthy, kCordoned, kDegraded };
// labels-v1 `nvlh`, per pair: the NVLinks between two GPUs are fine (`1`), degraded (`d`: error or
// recovery rate over the agent's threshold), down (`0`: fewer active links than the board is built
// with), or cordoned by an operator (`c`: not used for placement at all).
enum class LinkHealth : std::uint8_t { kOk, kDegraded, kDown, kCordoned };
// "ok", "degraded", "down", "cordoned": what explain and /nodes write.
std::string_view linkHealthName(LinkHealth health) noexcept;
enum class GpuUse : std::uint8_t { kFree, kAllocated, kMigMode };
enum class MigMode : std::uint8_t { kNotCapable, kDisabled, kEnabled, kPending };
enum class MigInstanceState : std::uint8_t { kFree, kUsed, kReserved };

struct MigInstance {
  char profileCode = '0';  // labels-v1 profile code
  int start = 0;           // first memory slice
  MigInstanceState state = MigInstanceState::kFree;
  // A device the device plugin shares (GFD's nvidia.com/mig-<profile>.replicas): the replicas pods
  // hold while one is still free (state kFree; labels-v1 state `1`-`9`, docs/sharing.md).
  std::uint8_t heldReplicas = 0;
  friend bool operator==(const MigInstance&, const MigInstance&) = default;
};
// The most held replicas a token's state can say; a device with more is written used.
inline constexpr int kMaxWrittenHeldReplicas = 9;

enum class TopologySource : std::uint8_t {
  kLabelsV1,          // full graph from `<prefix>*` labels
  kFeatureDiscovery,  // nvidia.com/gpu.count / gpu.product (+ allocatable); links unknown
  kAllocatable,       // only status.allocatable nvidia.com/gpu; links unknown
  kNone,              // no GPUs
};

// A MIG device count the fallback sources report (`nvidia.com/mig-<profile>.count` or
// allocatable `nvidia.com/mig-<profile>`): which profiles exist, not where.
struct MigDeviceCount {
  std::string profile;  // resource spelling, "1g.10gb", "1g.10gb.me"
  std::int64_t count = 0;
  friend bool operator==(const MigDeviceCount&, const MigDeviceCount&) = default;
};

// Index of the unordered pair (i, j), i < j, in row-major upper-triangle order (labels-v1).
constexpr int pairIndex(int i, int j, int n) noexcept {
  return i * (2 * n - i - 1) / 2 + (j - i - 1);
}
constexpr int pairCount(int n) noexcept {
  return n * (n - 1) / 2;
}

struct GpuTopology {
  TopologySource source = TopologySource::kNone;
  bool linksKnown = false;  // false for the fallbacks: every pair is LinkClass::kUnknown
  int gpuCount = 0;
  std::string model;                                   // sanitised product name; empty when unknown
  std::string fabric;                                  // labels-v1 `fabric`; empty when unknown
  std::vector<std::uint8_t> nvlinks;                   // per pair: NVLink count
  std::vector<PcieLevel> pcie;                         // per pair
  std::vector<int> numa;                               // per GPU; -1 unknown
  std::vector<GpuHealth> health;                       // per GPU
  std::vector<GpuUse> used;                            // per GPU
  std::vector<MigMode> migMode;                        // per GPU
  std::vector<std::vector<MigInstance>> migInstances;  // per GPU, sorted by start
  std::vector<MigDeviceCount> migDeviceCounts;         // fallback sources only
  std::int64_t generation = 0;                         // labels-v1 `gen`; 0 when absent
  // Per GPU, or empty when the labels carry none (labels-v1 `bus`, `uuid`): the identities a DRA
  // driver names GPUs by (docs/dra.md).
  std::vector<PciAddress> pciAddresses;
  std::vector<GpuUuid> uuids;
  // Per GPU, or empty when none is published (labels-v1 `tenants`): the replicas of the GPU that
  // pods hold where the device plugin shares it (time-slicing, MPS; docs/sharing.md).
  std::vector<std::uint8_t> tenants;
  // Per pair, or empty when none is published (labels-v1 `nvlh`, written only when some pair is
  // not kOk): the health of the NVLinks between two GPUs (docs/health.md).
  std::vector<LinkHealth> linkHealth;

  LinkHealth linkHealthOf(int i, int j) const noexcept;

  int tenantsOf(int gpu) const noexcept {
    const auto at = static_cast<std::size_t>(gpu);
    return gpu >= 0 && at < tenants.size() ? tenants[at] : 0;
  }

  bool nvswitchFabric() const noexcept { return fabric.rfind("nvsw", 0) == 0; }
  // The NVLinks placement may use: 0 across a cordoned pair.
  int nvlinkCount(int i, int j) const noexcept;
  // The NVLinks the pair has, cordoned or not (what the NVIDIA device plugin counts).
  int installedNvlinks(int i, int j) const noexcept;
  PcieLevel pcieLevel(int i, int j) const noexcept;
  // NVLink when any NVLink joins the pair, else its PCIe level; kUnknown when links are unknown.
  LinkClass linkClass(int i, int j) const noexcept;

  friend bool operator==(const GpuTopology&, const GpuTopology&) = default;
};

// `gpuCount` GPUs from `source` with every per-GPU and per-pair vector sized and nothing known yet:
// links unknown (no NVLink, PCIe kUnknown, linksKnown false), NUMA -1, every GPU healthy, free and
// in `migMode`, no MIG instances. The label readers and the node agent's discovery fill in what
// they know; `migMode` is what a GPU is taken to be until then (kNotCapable for the agent, which
// learns it per GPU; kDisabled for the fallback counts, which cannot say).
GpuTopology blankTopology(TopologySource source, int gpuCount, MigMode migMode);

}  // namespace gte
