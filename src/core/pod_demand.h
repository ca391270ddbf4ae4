#pragma once
// What one pod asks of the topology engine, parsed once per request: its GPU and MIG requests and
// the topology annotations (`<prefix>min-link`, `<prefix>numa`, `<prefix>strategy`).
#include <cstdint>
#include <optional>
#include <vector>

#include "base/result.h"
#include "dra_placement/dra_demand.h"
#include "model/gpu_request.h"
#include "model/pod_info.h"
#include "policy/link_class.h"
#include "policy/policy.h"

namespace gte {

// Where a pod's replicas of shared GPUs must land (`<prefix>replicas-on`).
enum class ReplicasOn : std::uint8_t {
  kAny,       // wherever the device plugin puts them
  kDistinct,  // each on its own GPU, the GPUs NVLink-connected
  kSame,      // all on one GPU
};

struct PodDemand {
  std::int64_t gpus = 0;        // whole GPUs
  std::vector<MigRequest> mig;  // MIG instances by resource suffix ("3g.40gb", "1g.10gb.me")
  // Weakest link class accepted between any two of the pod's GPUs; nullopt accepts anything.
  std::optional<LinkClass> minLink;
  bool singleNuma = false;  // all GPUs in one NUMA node
  Strategy strategy = Strategy::kBinpack;
  // kExclusive: whole GPUs the device plugin shares among pods (core/gpu_sharing.h) do not do.
  Isolation isolation = Isolation::kShared;
  // Among nodes whose GPUs are shared: the policy's sharing.placement (no annotation sets it).
  SharedPlacement sharedPlacement = SharedPlacement::kSpread;
  // `<prefix>replicas-on`: where a multi-replica pod's replicas must land (docs/sharing.md).
  ReplicasOn replicasOn = ReplicasOn::kAny;
  // `gpus` are asked as nvidia.com/gpu.shared, the device plugin's renamed replicas of shared
  // GPUs: only a node that advertises that resource hands them out (docs/sharing.md).
  bool sharedResource = false;
  // The most of `gpus` one container asks, where the pod's containers split them
  // (PodInfo::largestContainerGpus); -1: one container asks all `gpus` (or not known). A device
  // plugin that admits one replica per request judges each container (docs/sharing.md); a split
  // pod is not a plain demand (core/plain_answers.h).
  std::int64_t largestContainerGpus = -1;
  // Its DRA claims and DRA-backed nvidia.com/gpu (dra_placement/dra_demand.h); null: no DRA part.
  DraDemandConstSharedPtr dra;

  // Asks for nothing the extender places: no GPUs, no MIG instances, no claims to allocate.
  bool empty() const noexcept { return gpus == 0 && mig.empty() && !draClaims(); }
  // Claims the DRA allocator will allocate on the chosen node (the extended-resource claim alone
  // is decided from the node's precomputed picks, like a device-plugin request).
  bool draClaims() const noexcept { return dra && dra->hasClaims(); }
  std::int64_t migInstanceCount() const noexcept;
  // The most GPUs one container asks.
  std::int64_t containerGpus() const noexcept {
    return largestContainerGpus >= 0 ? largestContainerGpus : gpus;
  }
};

// Two demands a node answers alike: the same GPUs, MIG instances, link class and NUMA demand (the
// strategy only ranks nodes).
inline bool sameShape(const PodDemand& a, const PodDemand& b) {
  return a.gpus == b.gpus && a.mig == b.mig && a.minLink == b.minLink &&
         a.singleNuma == b.singleNuma && a.isolation == b.isolation &&
         a.replicasOn == b.replicasOn && a.sharedResource == b.sharedResource &&
         a.largestContainerGpus == b.largestContainerGpus;
}

inline constexpr std::string_view kMinLinkAnnotation = "min-link";
inline constexpr std::string_view kNumaAnnotation = "numa";
inline constexpr std::string_view kStrategyAnnotation = "strategy";
inline constexpr std::string_view kIsolationAnnotation = "isolation";
inline constexpr std::string_view kReplicasOnAnnotation = "replicas-on";

// Errors name the annotation: "annotation gputopo.dev/min-link: want one of nvlink, pix, pxb,
// phb, node, sys; got 'fast'". The caller rejects every node with that message. `dra`, when the
// cluster state watches DRA objects, resolves the pod's claims (resolveDraDemand).
Result<PodDemand> parsePodDemand(const PodInfo& pod, const Policy& policy,
                                 const dra::DraObjects* dra = nullptr);

}  // namespace gte
