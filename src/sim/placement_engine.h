#pragma once
// The simulator's engine: pods placed one at a time on an evolving copy of a cluster, with the
// extender's own decision code. Every node is checked (CPU and memory, then checkFit or a
// baseline's count), the extender's wire scores come from prioritizeNodes over the feasible nodes,
// the chooser (node_chooser.h) picks the best-scored node with seeded random tie-breaks, and the
// pod takes the GPUs the NVIDIA device plugin would hand out (predictAllocation); that node's
// state is then rebuilt with them taken. The nodes start from built-in templates (simulate) or
// from a live cluster's node states (live_replay.h); either way the engine changes only its own
// copies: the states it starts from are shared, immutable and never written.
//
// DRA mode (`SimOptions::draOrder`, sim/dra_cluster.h; simulate and the group runs): every node's
// GPUs come from one NVIDIA DRA ResourceSlice and `nvidia.com/gpu` is a DRA-backed extended
// resource, so inside the chosen node every chooser's pod gets the devices the first-fit replica of
// the scheduler's DRA allocator picks, and the extender decides on node states built from the
// slices and allocations. Whole GPUs only (no MIG templates or MIG pods). With `draPods`
// kClaimTemplate, pods of 2+ GPUs ask through the claim-template tiers instead: every chooser that
// models kube-scheduler adds its DRA plugin's score for the tier each node would allocate, and the
// extender decides the claim.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include "core/node_candidate.h"
#include "core/node_state.h"
#include "core/node_usage.h"
#include "core/pod_demand.h"
#include "model/node_info.h"
#include "policy/link_class.h"
#include "policy/policy.h"
#include "sim/dra_cluster.h"
#include "sim/node_chooser.h"
#include "sim/sim_pod.h"
#include "topology/gpu_topology.h"

namespace gte::sim {

struct SimOptions {
  Chooser chooser = Chooser::kExtender;
  InTree inTree = InTree::kLeastAllocated;  // next to the extender only
  // Pods without GPUs under the extender choosers: scored by `inTree` (nullopt), or by this
  // strategy when the default scheduler places them (the chart's scheduler serves opted-in pods).
  std::optional<InTree> cpuPodsInTree;
  int extenderWeight = 12;                             // the chart's default
  std::uint64_t seed = 1;                              // tie-breaking
  std::vector<int> fragmentationAt = {50, 70, 90};     // arrived % of capacity (simulate only)
  DraDeviceOrder draOrder = DraDeviceOrder::kOff;      // kOff: the device plugin hands out GPUs
  DraPodForm draPods = DraPodForm::kExtendedResource;  // DRA mode: how 2+-GPU pods ask
};

// One node as the engine holds it. `name` and `labels` belong to the caller and must outlive the
// engine.
struct EngineNode {
  std::string_view name;
  std::int64_t cpuMilli = 0;  // capacity
  std::int64_t memoryMib = 0;
  // What the state is rebuilt from when a pod lands (rebuildNodeState): the node's labels as
  // read, with `usage` applied on top.
  const NodeState* labels = nullptr;
  NodeStateConstSharedPtr state;  // the node now
  NodeUsage usage;                // what is taken on top of `labels`
  std::int64_t cpuRequested = 0;
  std::int64_t memoryRequested = 0;
  NodeInfo draNode;  // DRA mode: the node as its DRA state is built from (name, labels)
};

struct PodPlacement {
  int node = -1;  // index into the engine's nodes; -1 when no node was feasible
  GpuMask gpus = 0;
  // Replicas of shared GPUs the pod holds (docs/sharing.md): they name no GPU; the node's usage
  // counts them, so its state lays them on its tenants.
  int replicas = 0;
  LinkClass weakest = LinkClass::kUnknown;  // 2+ GPUs: weakest pair of the set it got
  LinkClass bestOffered =
      LinkClass::kUnknown;  // 2+ GPUs: best weakest pair a feasible node offered
  int feasibleNodes = 0;
  int tiedNodes = 0;   // feasible nodes that shared the chosen node's score (one drawn at random)
  int score = -1;      // the extender's 0..100 score of the chosen node (-1: not asked)
  int wireScore = -1;  // its 0..10 wire score over the feasible nodes (-1: not asked)
  // Whole GPUs: free GPUs of the node that had a free NVLink peer and have none once the pod's
  // GPUs are taken (GpuPick::stranded).
  int strandedGpus = 0;
  std::int64_t arrivedGpus = 0;    // simulate: GPU demand arrived so far, this pod included
  std::int64_t allocatedGpus = 0;  // simulate: GPUs allocated once this pod is placed
  // MIG pods: where the instance went, and what the cluster offered when the pod arrived.
  int migGpu = -1;
  int migStart = -1;
  bool migInvalid = false;    // a MIG-naive chooser picked a node where the profile has no legal
                              // start: the instance cannot be created (node stays -1)
  bool migCountsFit = false;  // dynamic MIG: some node (CPU and memory fitting) had a GPU whose
                              // unpartitioned slice counts cover the profile
  bool migLegal = false;      // some node (CPU and memory fitting) had a legal free placement
  std::int64_t arrivedSlices = 0;       // simulate: GPU demand in memory slices (8 per GPU)
  std::int64_t allocatedMigSlices = 0;  // simulate: memory slices of placed MIG instances
};

// The demand a simulated pod makes: its whole GPUs or its one MIG instance, the policy's default
// strategy, no annotations.
PodDemand simPodDemand(const SimPod& pod, const Policy& policy);

// What the DRA allocator gives a claim on a node as it is: the firstAvailable alternative it
// takes (-1: none) and the weakest link of the set. Cached per node and GPU count until a pod
// lands on the node.
struct ClaimOffer {
  bool known = false;
  int alternative = -1;
  LinkClass weakest = LinkClass::kUnknown;
};
inline constexpr int kClaimOfferSizes = 33;  // claim-template pods of 2..32 GPUs

class PlacementEngine {
 public:
  // `policy` must outlive the engine. DRA mode (`options.draOrder` not kOff): `dra` holds every
  // node's slice (templateEngineNodes publishes them) and must outlive the engine.
  PlacementEngine(std::vector<EngineNode> nodes, const Policy& policy, SimOptions options,
                  SimDraCluster* dra = nullptr);

  // The demand the extender reads for the pod: `demand` itself, or for a pod of 2+ GPUs that
  // asks through the claim-template tiers (DRA mode, kClaimTemplate) its claim, no nvidia.com/gpu.
  // The group planner plans such members by their claims.
  PodDemand askedDemand(const SimPod& pod, const PodDemand& demand);

  // Chooses a node for the pod, places it there and returns where it went and what it got. Only
  // nodes whose GPU product matches the pod's selector (SimPod::gpuProduct) are candidates, and
  // with `allowed` non-empty (one entry per node) only those whose entry is non-zero: the nodes
  // a scheduler was restricted to (a topology domain's nodeSelector, a group's planned node).
  PodPlacement place(const SimPod& pod, const PodDemand& demand,
                     std::span<const std::uint8_t> allowed = {});

  // Gives back what `place` took for this pod on `placement.node` (its GPUs or MIG instance, CPU
  // and memory): the pod ended, or a gang it belonged to was rolled back. In DRA mode its claim
  // is released: its whole-GPU devices are free to the allocator again.
  void release(const SimPod& pod, const PodPlacement& placement);

  // The node's labels changed (its GPUs' or links' health, fault_model.h): its state is rebuilt
  // from `labels` with what the replay placed there still taken; pods on it are not moved.
  // `labels` must outlive the engine (or the next relabel). Not in DRA mode.
  void relabel(std::size_t node, const NodeState* labels);

  std::span<const EngineNode> nodes() const noexcept { return nodes_; }

 private:
  // A pod of 2+ GPUs that asks through the claim-template tiers (DRA mode, kClaimTemplate).
  bool asksByClaim(const SimPod& pod) const noexcept;
  std::vector<EngineNode> nodes_;
  const Policy& policy_;
  SimOptions options_;
  std::mt19937_64 rng_;
  std::vector<std::size_t> feasible_;
  std::vector<NodeCandidate> candidates_;
  // DRA mode: claim-template pods' offers per node and GPU count (what the allocator would take
  // there), recomputed once a pod lands on the node; the feasible nodes' firstAvailable
  // alternatives for the pod being placed.
  SimDraCluster* dra_ = nullptr;
  std::vector<std::array<ClaimOffer, kClaimOfferSizes>> offers_;
  std::vector<int> alternatives_;
};

}  // namespace gte::sim
