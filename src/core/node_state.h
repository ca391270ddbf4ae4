#pragma once
// Everything the decision core needs about one node, precomputed when the node or its usage
// changes so that filter and prioritize do O(1) lookups per node. Immutable and
// shared as std::shared_ptr<const NodeState>.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/allocator_chain.h"
#include "core/gpu_sharing.h"
#include "core/node_usage.h"
#include "health/degraded_hardware.h"
#include "model/node_info.h"
#include "policy/policy.h"
#include "topology/gpu_topology.h"
#include "topology/mig_placement.h"

namespace gte {

class NodeCharges;    // core/node_charges.h
struct DraNodeState;  // dra_placement/dra_node_state.h: held by pointer, so the many files that
                      // read a node state do not compile the DRA room's headers
using DraNodeStateConstSharedPtr = std::shared_ptr<const DraNodeState>;

enum class TopologyStatus : std::uint8_t {
  kKnown,      // labels-v1 read cleanly (links may still be absent: linksKnown)
  kUnknown,    // no labels-v1: counts from GPU Feature Discovery / allocatable, links unknown
  kMalformed,  // labels-v1 present but malformed: treated as unknown, error kept
};

// Who hands out `nvidia.com/gpu` on a node (docs/dra.md).
enum class GpuAllocator : std::uint8_t {
  kDevicePlugin,  // the NVIDIA device plugin (status.allocatable carries the GPUs)
  kDra,           // the scheduler's DRA allocator, first-fit in device order (a DeviceClass
                  // backs the resource and the node has no device-plugin allocatable for it)
};

// A set of GPUs the pod would get, with the facts filter and prioritize judge it by.
struct GpuPick {
  GpuMask gpus = 0;                         // 0 when no such set exists
  LinkClass weakest = LinkClass::kUnknown;  // kNvlink for a single GPU (no pair is weaker)
  bool singleNuma = false;                  // one known NUMA node
  // The set's weakest pair in GB/s one way (topology/link_bandwidth.h); 0 for a single GPU or
  // unknown links.
  std::uint16_t bandwidthGBps = 0;
  int stranded = 0;  // free GPUs that had a free NVLink peer and have none once this is taken
  int largestNvlinkDomainAfter = 0;  // largest NVLink-connected group of free GPUs left
  int largestNvlinkCliqueAfter = 0;  // largest all-pairs-NVLink set of free GPUs left
};

// Per request size k, over the node's free GPUs.
struct WholeGpuOptions {
  GpuPick devicePlugin;  // what the node's allocator hands over (the set the pod really gets):
                         // the NVIDIA device plugin's pick, or on a DRA node the first k free
                         // GPUs in the DRA device order
  GpuPick numaAligned;   // the device plugin's pick inside the NUMA node the kubelet Topology
                         // Manager would choose (lowest NUMA id with k free GPUs); on a DRA node
                         // the DRA pick when it lies in one NUMA node (no Topology Manager there)
  GpuPick best;          // best set by the policy's link scores
  int bestScore = 0;
  GpuPick bestSingleNuma;  // best set inside one NUMA node
};

// Per request size k, with every usable GPU free: decides Unresolvable (preemption cannot help).
struct CapacityOptions {
  LinkClass devicePluginWeakest = LinkClass::kUnknown;
  bool numaAlignedPossible = false;
  LinkClass numaAlignedWeakest = LinkClass::kUnknown;
};

// The best place for one instance of a MIG profile (single-instance requests, the common case).
struct MigProfileFit {
  std::string profile;   // product table name
  std::string resource;  // resource suffix ("1g.10gb.me")
  int gpu = -1;          // -1: no free placement now
  int start = -1;
  bool existing = false;  // a free existing instance (no repartitioning needed)
  // 1000 minus the placement value the instance blocks, per mille of an empty GPU's value;
  // 1000 for an existing instance (it blocks nothing new).
  int qualityPermille = 0;
  bool possibleWhenEmpty = false;  // some GPU could host it once its pods are gone
};

// Of the free MIG instances of profile `code` (NodeState::migFreeInstances, one entry per free
// replica on a shared device, adjacent), the one with the most entries: (GPU, start), the first on
// a tie;
// nullopt when none is free. The device plugin hands a shared profile's replicas out from the
// devices with the fewest tenants first; an unshared device has one entry, so this is the first.
std::optional<std::pair<int, int>> mostFreeMigInstance(
    const std::vector<std::vector<MigInstance>>& freeInstances, char code);

// Member order matters: a request reads the first members of thousands of states (checkFit and
// scoreTerms for whole GPUs, down to topology.linksKnown), so they come first and share one or two
// cache lines; the rest is read only for MIG, preempt, bind and diagnostics.
struct NodeState {
  TopologyStatus status = TopologyStatus::kUnknown;
  // The device plugin shares the whole GPUs it hands out here (`sharing` below, allocator
  // kDevicePlugin): read by every exclusive pod's decision, so kept on the first line.
  bool sharesGpus = false;
  int gpuCount = 0;     // whole GPUs on the node
  int usableCount = 0;  // healthy, not in MIG mode: what could ever be handed out whole
  int freeCount = 0;
  GpuMask usableMask = 0;
  GpuMask freeMask = 0;
  int largestNvlinkDomain = 0;  // largest NVLink-connected group of free GPUs
  int largestNvlinkClique = 0;  // largest all-pairs-NVLink set of free GPUs
  // Facts scoreTerms needs, folded out of `topology` and `capacity` so it reads none of them:
  // GPUs whose NUMA node is unknown (every GPU unless the topology is kKnown), and bit s set when
  // the empty node's device-plugin pick of s >= 2 GPUs is all-NVLink (capacity[s]).
  GpuMask numaUnknownGpus = 0;
  std::uint32_t nvlinkWhenEmptySizes = 0;

  std::vector<WholeGpuOptions> whole;  // index k, 0..freeCount (0 unused)
  // Index k, 0..usableCount (0 unused). Depends on labels and policy only, so states that differ
  // in usage alone share one table.
  std::shared_ptr<const std::vector<CapacityOptions>> capacity;
  GpuTopology topology;  // as read (fallback counts when malformed); linksKnown is its first line
  // whole[k].devicePlugin for k < kInlinePicks (k <= freeCount; the rest left empty), copied here
  // so that the per-request loops read a node's pick at a fixed offset from the state instead of
  // through `whole` (a second, dependent cache miss per node).
  static constexpr std::size_t kInlinePicks = 9;
  std::array<GpuPick, kInlinePicks> devicePluginPicks{};
  // GPU pairs the health policy ranks at their PCIe class (health/degraded_hardware.h). Right after
  // the picks, off the first lines: only requests the precomputed answers do not cover read it,
  // and on a node with nothing degraded only its first word (`gpus` is 0).
  AvoidedPairs avoided;

  std::string name;
  std::string topologyError;  // set for kMalformed
  // A device-plugin pick of more than 12 GPUs ran out of its work allowance (a score table
  // without switch-hierarchy structure) and is the best partition found, not proven upstream's.
  bool devicePluginApproximate = false;
  std::int64_t allocatableGpus = -1;  // status.allocatable nvidia.com/gpu; -1 when absent
  // status.allocatable nvidia.com/gpu.shared (the device plugin's renamed replicas of shared
  // GPUs); -1 when absent.
  std::int64_t allocatableSharedGpus = -1;
  // Whether the device plugin shares each GPU among pods (time-slicing, MPS; core/gpu_sharing.h):
  // a pod asking for exclusive GPUs is refused here.
  GpuSharing sharing;
  // MIG profiles whose devices the device plugin shares (core/gpu_sharing.h), sorted by profile: a
  // pod asking for exclusive GPUs is refused a shared profile. Empty on almost every node.
  // Null on a node that shares none (kept out of line: the state stays the size it was).
  std::shared_ptr<const std::vector<SharedMigProfile>> sharedMig;
  const GpuSharing* migSharing(std::string_view profile) const noexcept {
    if (!sharedMig) return nullptr;
    for (const SharedMigProfile& shared : *sharedMig)
      if (shared.profile == profile) return &shared.sharing;
    return nullptr;
  }
  // Shared GPUs (sharesGpus): the replicas pods hold on each GPU: the agent's `tenants` label plus
  // the replicas of the pods the usage holds (placed since its last pass), laid on the free GPUs
  // as the device plugin lays them, one by one on the GPU with the fewest. Ties go to the lowest
  // index: which tied GPU the plugin takes cannot be known, but the counts as a multiset are exact.
  std::array<std::uint8_t, kMaxGpus> tenants{};
  // Shared GPUs: the replicas the device plugin can still hand out: over the free GPUs, replicas
  // per GPU less their tenants; without a replica count, allocatable nvidia.com/gpu less every
  // tenant; -1 when neither is known (kube-scheduler's resource fit alone bounds them then).
  std::int32_t freeReplicas = 0;

  // MIG (labels-v1 nodes with a product table entry).
  std::optional<MigProduct> migProduct;
  bool dynamicMig = false;
  std::vector<bool> migUsable;         // per GPU: MIG enabled and healthy
  std::vector<SliceMask> migOccupied;  // per GPU, usage included
  // Per GPU, free and not taken: one entry per instance, or per free replica of a device the
  // device plugin shares, an instance's entries adjacent (taking one erases its first).
  std::vector<std::vector<MigInstance>> migFreeInstances;
  std::vector<std::vector<MigInstance>> migInstances;  // per GPU, all, with usage-created ones
  std::vector<MigProfileFit> migFits;                  // per product profile
  int migSlicesTotal = 0;
  int migSlicesInUse = 0;  // slices of instances pods use (or the extender assumed)
  // Fallback nodes: MIG devices by resource suffix, minus those taken.
  std::vector<MigDeviceCount> migFreeDevices;
  std::vector<MigDeviceCount> migTotalDevices;

  // The node allocator's successive picks per size (core/allocator_chain.h): what a pod group's
  // slots on the node are counted from (group/group_slots.h).
  AllocatorChain groupChain;

  // Cluster-cache mode: the pods charged to this node (bound or reserved), whose counted devices
  // make up the usage above; null in full-Node mode.
  std::shared_ptr<const NodeCharges> charges;

  // DRA (docs/dra.md). On a kDra node the whole-GPU options above describe the DRA allocator's
  // picks, usable GPUs are those its devices offer, and free GPUs those no claim holds: the
  // charges' GPUs are not added again (the claims already count them).
  GpuAllocator allocator = GpuAllocator::kDevicePlugin;
  DraNodeStateConstSharedPtr dra;  // null: no ResourceSlice serves the node
  // On a kDra node built with usage (a group's holds, pods placed one after another), `dra` has
  // those GPUs taken for claims too, so a claim's first-fit skips them; this is the DRA state as
  // the slices and claims have it (null: the same as `dra`). Rebuilds start from it.
  DraNodeStateConstSharedPtr draPublished;
  const DraNodeStateConstSharedPtr& publishedDra() const noexcept {
    return draPublished ? draPublished : dra;
  }
  // Each GPU's NVLink neighbours (DRA nodes): what describing a claim's GPU set at request time
  // reads instead of the pair table.
  std::array<GpuMask, kMaxGpus> nvlinkNeighbours{};

  bool linksKnown() const noexcept {
    return status == TopologyStatus::kKnown && topology.linksKnown;
  }
  const MigProfileFit* migFit(std::string_view resource) const noexcept;
  int tenantsOf(int gpu) const noexcept {
    return gpu >= 0 && gpu < kMaxGpus ? tenants[static_cast<std::size_t>(gpu)] : 0;
  }
  // What the device plugin advertises of the node's GPUs: allocatable nvidia.com/gpu, or where it
  // renames its shared replicas, nvidia.com/gpu.shared; -1 when neither is allocatable.
  std::int64_t advertisedGpus() const noexcept {
    return allocatableGpus >= 0 ? allocatableGpus : allocatableSharedGpus;
  }
  // Whether `k` replicas are free (shared GPUs; always where no bound is known).
  bool replicasFree(std::int64_t k) const noexcept { return freeReplicas < 0 || k <= freeReplicas; }
  // The GPU's mark as placement reads it (docs/health.md): its `health` label, except that a
  // healthy GPU whose DRA device carries a taint of effect None reads as degraded.
  GpuHealth gpuHealth(int gpu) const noexcept;
};

using NodeStateConstSharedPtr = std::shared_ptr<const NodeState>;

// Pure: no I/O, no clock. Never fails: malformed labels yield a kMalformed state with the error.
// Reads the node's labels; the rebuilds below reuse what was read.
NodeStateConstSharedPtr buildNodeState(const NodeInfo& node, const NodeUsage& usage,
                                       const Policy& policy);

// The same node under other usage, from a state built from its current labels, allocatable and
// `policy`: the labels are not read again and the usage-independent tables are shared.
// `released` names devices the labels show as in use that are to count as free (preempt's
// what-if: the GPUs and MIG instances of the pods it would evict); nothing else knows the label
// format.
// `dra`, when set, replaces the state's DRA state (preempt's what-if: draStateWithout).
NodeStateConstSharedPtr rebuildNodeState(const NodeState& sameLabels, const NodeUsage& usage,
                                         const Policy& policy, const NodeUsage& released = {},
                                         DraNodeStateConstSharedPtr dra = nullptr);

// The node's labels and allocatable as read, nothing derived (no usage applied): what
// rebuildNodeState and chargeNodeState start from. The cluster cache reads a node once per label
// change, through this.
NodeStateConstSharedPtr readNodeState(const NodeInfo& node, const Policy& policy);

// rebuildNodeState with the usage `charges` count; the state keeps the charges for preempt's
// what-if (nodeStateWithout in core/node_charges.h). `dra` is the node's DRA state (built by
// buildDraNodeState from the same labels' topology), null when no slice serves it; rebuilds
// (rebuildNodeState) keep the state's.
NodeStateConstSharedPtr chargeNodeState(const NodeState& sameLabels,
                                        std::shared_ptr<const NodeCharges> charges,
                                        const Policy& policy,
                                        DraNodeStateConstSharedPtr dra = nullptr);

}  // namespace gte
