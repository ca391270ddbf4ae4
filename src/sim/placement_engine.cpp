#include "sim/placement_engine.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <utility>

#include "core/claims_as_gpus.h"
#include "core/dra_decision.h"
#include "core/fit.h"
#include "core/node_decider.h"
#include "core/predict_allocation.h"
#include "dra_placement/dra_node_state.h"
#include "prioritize/prioritize_nodes.h"
#include "sim/mig_slices.h"

namespace gte::sim {
namespace {

// Chooses uniformly among the nodes with the highest score in one pass (reservoir sampling).
class TopNodes {
 public:
  explicit TopNodes(std::mt19937_64& rng) : rng_(rng) {}
  void offer(int node, std::int64_t score) {
    if (chosen_ < 0 || score > best_) {
      best_ = score;
      chosen_ = node;
      ties_ = 1;
    } else if (score == best_) {
      ++ties_;
      if (std::uniform_int_distribution<int>(0, ties_ - 1)(rng_) == 0) {
        chosen_ = node;
      }
    }
  }
  int chosen() const { return chosen_; }
  int ties() const { return ties_; }

 private:
  std::mt19937_64& rng_;
  int chosen_ = -1;
  int ties_ = 0;
  std::int64_t best_ = 0;
};

// The pod's nodeSelector on the GPU product.
bool selects(const EngineNode& node, const SimPod& pod) {
  return pod.gpuProduct.empty() || node.state->topology.model == pod.gpuProduct;
}

// Replicas of a shared node's GPUs still free, as kube-scheduler's resource fit bounds them: the
// state's count, which holds the tenants the labels report and the replicas the replay placed;
// unbounded where the GPUs are whole (their free GPUs bound them) or no bound is known.
std::int64_t freeReplicas(const EngineNode& node) {
  const NodeState& state = *node.state;
  if (!state.sharesGpus || state.freeReplicas < 0) return INT64_MAX;
  return state.freeReplicas;
}

bool resourcesFit(const EngineNode& node, const SimPod& pod) {
  return node.cpuRequested + pod.cpuMilli <= node.cpuMilli &&
         node.memoryRequested + pod.memoryMib <= node.memoryMib &&
         (pod.gpus <= 0 || pod.gpus <= freeReplicas(node));
}

// The pod's MIG profile in this node's product table; nullptr for a node without MIG or a pod
// without a MIG request.
const MigProfile* migProfileOn(const EngineNode& node, const SimPod& pod) {
  if (pod.migProfile.empty() || !node.state->migProduct) {
    return nullptr;
  }
  return node.state->migProduct->findByName(pod.migProfile);
}

// What kube-scheduler alone sees of a node's GPUs (the baseline choosers; the extender's decides
// through NodeDecider in place()).
bool gpusFit(const EngineNode& node, const SimPod& pod, const PodDemand& demand,
             const Policy& policy) {
  if (demand.empty()) {
    return true;
  }
  if (!demand.mig.empty()) {
    // A MIG-naive scheduler sees the free instances per profile (the device plugin's counts,
    // exact) and, with dynamic MIG, counts unpartitioned slices: where they lie it does not know.
    const MigProfile* profile = migProfileOn(node, pod);
    return profile != nullptr && (freeInstanceExists(*node.state, *profile) ||
                                  (policy.dynamicMig && sliceCountsFit(*node.state, *profile)));
  }
  // kube-scheduler sees the count only: of free GPUs, or of replicas where the device plugin
  // shares them (resourcesFit bounds those).
  return node.state->sharesGpus || node.state->freeCount >= demand.gpus;
}

// nvidia.com/gpu as kube-scheduler sees it: the GPUs not in MIG mode, or their replicas where
// the device plugin shares them.
NodeLoad loadAfter(const EngineNode& node, const SimPod& pod) {
  const NodeState& state = *node.state;
  std::int64_t capacity = state.usableCount;
  std::int64_t requested = state.usableCount - state.freeCount + pod.gpus;
  if (state.sharesGpus && state.freeReplicas >= 0 && state.advertisedGpus() >= 0) {
    capacity = state.advertisedGpus();
    requested = capacity - state.freeReplicas + pod.gpus;
  }
  return NodeLoad{node.cpuMilli,  node.cpuRequested + pod.cpuMilli,
                  node.memoryMib, node.memoryRequested + pod.memoryMib,
                  capacity,       requested};
}

// `wire` is the extender's 0..10 answer for this node (prioritizeNodes over the feasible nodes).
std::int64_t nodeScore(const EngineNode& node, const SimPod& pod, const PodDemand& demand, int wire,
                       const SimOptions& options) {
  const NodeLoad load = loadAfter(node, pod);
  switch (options.chooser) {
    case Chooser::kExtender:
      if (demand.empty() && options.cpuPodsInTree) {
        return inTreeScore(*options.cpuPodsInTree, load);
      }
      return inTreeScore(options.inTree, load) +
             static_cast<std::int64_t>(wire) * options.extenderWeight * 10;
    case Chooser::kLeastAllocated:
      return inTreeScore(InTree::kLeastAllocated, load);
    case Chooser::kMostAllocatedGpu:
      return inTreeScore(InTree::kMostAllocated, load);
    case Chooser::kBestFit: {
      const std::int64_t cpuLeft = load.cpuCapacity - load.cpuRequested;
      if (!demand.mig.empty()) {
        // Fewest free MIG slices left, by count.
        const std::int64_t slicesLeft = freeMigSlices(*node.state) - pod.migSlices;
        return -(slicesLeft * 1'000'000'000 + cpuLeft);
      }
      const std::int64_t gpuLeft = load.gpuCapacity - load.gpuRequested;
      return -(demand.gpus == 0 ? cpuLeft : gpuLeft * 1'000'000'000 + cpuLeft);
    }
    case Chooser::kRandom:
      return 0;
  }
  return 0;
}

GpuMask draGpus(const DraNodeState& state, const dra::FirstFitResult& result) {
  GpuMask gpus = 0;
  for (const dra::PickedDevice& picked : result.devices) {
    const int gpu = state.deviceGpus[picked.position].gpu;
    gpus |= gpu >= 0 ? GpuMask{1} << gpu : 0;
  }
  return gpus;
}

ClaimOffer claimOffer(const EngineNode& node, const dra::ClaimProgram& claim) {
  ClaimOffer offer;
  offer.known = true;
  const DraNodeStateConstSharedPtr& state = node.state->dra;
  if (state == nullptr) {
    return offer;
  }
  dra::FirstFit firstFit({&claim});
  const dra::FirstFitResult result = firstFit.run(state->devices, state->classMatches);
  if (result.status == dra::FirstFitStatus::kAllocated && !result.devices.empty()) {
    offer.alternative = result.devices.front().alternative;
    offer.weakest = describeDraSet(*node.state, draGpus(*state, result)).weakest;
  }
  return offer;
}

// kube-scheduler's DynamicResources score (weight 2 in the default profile): per firstAvailable
// request 8 - i for the alternative i allocated, normalised to 0..100 over the feasible nodes by
// the highest (DefaultNormalizeScore).
std::int64_t draPluginScore(int alternative, int bestAlternative) {
  constexpr std::int64_t kMaxSubrequests = 8;  // resource.k8s.io FirstAvailableDeviceRequestMaxSize
  if (alternative < 0 || bestAlternative < 0) {
    return 0;
  }
  return 2 * (100 * (kMaxSubrequests - alternative) / (kMaxSubrequests - bestAlternative));
}

// DRA mode: the pod's claim (the scheduler's extended-resource claim, or the claim template's),
// filled by the first-fit replica over the node's device order; its devices become allocated, and
// the node's state is rebuilt from the slices and allocations as the extender's snapshot would.
bool takeDra(EngineNode& node, const SimPod& pod, const Policy& policy, SimDraCluster& dra,
             const dra::ClaimProgram& claim, PodPlacement& placement) {
  const DraNodeStateConstSharedPtr state = node.state->dra;
  if (state == nullptr) {
    return false;  // no slice serves the node: it has no DRA GPUs
  }
  dra::FirstFit firstFit({&claim});
  const dra::FirstFitResult result = firstFit.run(state->devices, state->classMatches);
  if (result.status != dra::FirstFitStatus::kAllocated) {
    return false;
  }
  const GpuMask gpus = draGpus(*state, result);
  placement.gpus = gpus;
  if (pod.gpus >= 2) {
    placement.weakest = describeDraSet(*node.state, gpus).weakest;
  }
  dra.allocate(state->devices, result);
  node.cpuRequested += pod.cpuMilli;
  node.memoryRequested += pod.memoryMib;
  node.state = chargeNodeState(*node.labels, nullptr, policy,
                               dra.nodeState(node.draNode, node.labels->topology));
  return true;
}

// False when the pod cannot run there: a MIG instance with no legal free placement on the node
// (only a MIG-naive chooser picks such a node). Nothing is taken then.
// `decided`: the decider the extender chooser filtered with (null for the baselines).
bool take(EngineNode& node, const SimPod& pod, const PodDemand& demand, const Policy& policy,
          const NodeDecider* decided, SimDraCluster* dra, DraPodForm form,
          PodPlacement& placement) {
  if (demand.empty()) {
    node.cpuRequested += pod.cpuMilli;
    node.memoryRequested += pod.memoryMib;
    return true;
  }
  if (dra != nullptr && demand.mig.empty()) {
    return takeDra(node, pod, policy, *dra, dra->claim(form, pod.gpus), placement);
  }
  // What the pod gets there by the route filter decides it by (NodeDecider): on a live what-if a
  // pod with claims gets the node's first-fit pick of claims that read as N GPUs (respecting the
  // GPUs earlier pods of the replay took), else the first-fit set over the devices as published.
  const NodeCandidate candidate{node.name, node.state.get(), {}, nullptr};
  NodePlacement placed;
  if (decided != nullptr) {
    (void)decided->decide(candidate, DecisionPart{}, &placed);
  } else {
    (void)NodeDecider(demand, policy).decide(candidate, DecisionPart{}, &placed);
  }
  const Allocation& allocation = placed.allocation;
  if (!allocation.complete) {
    return false;
  }
  node.cpuRequested += pod.cpuMilli;
  node.memoryRequested += pod.memoryMib;
  placement.replicas = allocation.replicas;
  if (demand.draClaims()) {
    GpuMask gpus = 0;
    for (const int gpu : allocation.gpus)
      gpus |= GpuMask{1} << gpu;
    const GpuPick pick = describeDraSet(*node.state, gpus);
    if (allocation.gpus.size() >= 2) placement.weakest = pick.weakest;
    placement.strandedGpus = pick.stranded;
  } else if (const GpuPick* pick = demand.gpus >= 1 && !node.state->sharesGpus
                                       ? wholeGpuPick(demand, *node.state)
                                       : nullptr) {
    if (demand.gpus >= 2) placement.weakest = pick->weakest;
    placement.strandedGpus = pick->stranded;
  }
  for (const int gpu : allocation.gpus) {
    placement.gpus |= GpuMask{1} << gpu;
  }
  if (!allocation.mig.empty()) {
    placement.migGpu = allocation.mig.front().gpu;
    placement.migStart = allocation.mig.front().start;
  }
  addToUsage(node.usage, allocation);
  node.state = rebuildNodeState(*node.labels, node.usage, policy);
  return true;
}

// What the cluster offered a MIG pod when it arrived, whoever chooses: a GPU whose unpartitioned
// slice counts cover the profile (with dynamic MIG only: else nothing creates an instance there),
// and a legal free placement (the extender's fit check), on nodes whose CPU and memory fit.
void noteMigOffer(std::span<const EngineNode> nodes, const SimPod& pod, const PodDemand& demand,
                  const Policy& policy, PodPlacement& placement) {
  // Legal as filter judges it (NodeDecider), whichever chooser placed the pod.
  const NodeDecider decider(demand, policy);
  for (const EngineNode& node : nodes) {
    if (!resourcesFit(node, pod) || (placement.migCountsFit && placement.migLegal)) {
      continue;
    }
    const MigProfile* profile = migProfileOn(node, pod);
    placement.migCountsFit = placement.migCountsFit || (policy.dynamicMig && profile != nullptr &&
                                                        sliceCountsFit(*node.state, *profile));
    placement.migLegal =
        placement.migLegal ||
        decider
            .decide(NodeCandidate{node.name, node.state.get(), {}, nullptr}, DecisionPart::kVerdict)
            .fit.fits();
  }
}

}  // namespace

PodDemand simPodDemand(const SimPod& pod, const Policy& policy) {
  PodDemand demand;
  demand.gpus = pod.gpus;
  if (!pod.migProfile.empty()) {
    demand.mig.push_back(MigRequest{migResourceSuffix(pod.migProfile), 1});
  }
  demand.strategy = policy.defaultStrategy;
  demand.isolation = pod.exclusive ? Isolation::kExclusive : policy.sharing.defaultIsolation;
  demand.sharedPlacement = policy.sharing.placement;
  if (pod.nvlinkOnly) demand.minLink = LinkClass::kNvlink;
  return demand;
}

PlacementEngine::PlacementEngine(std::vector<EngineNode> nodes, const Policy& policy,
                                 SimOptions options, SimDraCluster* dra)
    : nodes_(std::move(nodes)),
      policy_(policy),
      options_(std::move(options)),
      rng_(options_.seed),
      dra_(dra),
      offers_(dra != nullptr ? nodes_.size() : 0) {}

bool PlacementEngine::asksByClaim(const SimPod& pod) const noexcept {
  return dra_ != nullptr && options_.draPods == DraPodForm::kClaimTemplate && pod.gpus >= 2 &&
         pod.gpus < kClaimOfferSizes && pod.migProfile.empty();
}

PodDemand PlacementEngine::askedDemand(const SimPod& pod, const PodDemand& demand) {
  if (!asksByClaim(pod)) return demand;
  PodDemand claim = demand;
  claim.gpus = 0;
  claim.dra = dra_->templateDemand(pod.gpus);
  return claim;
}

PodPlacement PlacementEngine::place(const SimPod& pod, const PodDemand& demand,
                                    std::span<const std::uint8_t> allowed) {
  // A claim-template pod asks the extender through its claim, not nvidia.com/gpu; the
  // baselines see its GPU count (the DRA filter fits a node iff the last tier, any N, does).
  const bool claimPod = asksByClaim(pod);
  const PodDemand asked = askedDemand(pod, demand);
  // The extender chooser decides every pod that asks for devices as filter decides it
  // (NodeDecider: claims by the DRA first-fit, the rest by the device plugin's pick); the
  // baselines by what kube-scheduler alone sees (gpusFit).
  std::optional<NodeDecider> decider;
  if (options_.chooser == Chooser::kExtender && !asked.empty()) decider.emplace(asked, policy_);
  const auto offerOn = [&](std::size_t i) -> const ClaimOffer& {
    ClaimOffer& offer = offers_[i][static_cast<std::size_t>(pod.gpus)];
    if (!offer.known) {
      offer = claimOffer(nodes_[i], dra_->claim(DraPodForm::kClaimTemplate, pod.gpus));
    }
    return offer;
  };
  PodPlacement placement;
  feasible_.clear();
  candidates_.clear();
  alternatives_.clear();
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const EngineNode& node = nodes_[i];
    if ((!allowed.empty() && allowed[i] == 0) || !selects(node, pod) || !resourcesFit(node, pod)) {
      continue;
    }
    const NodeCandidate candidate{node.name, node.state.get(), {}, nullptr};
    if (decider ? !decider->decide(candidate, DecisionPart::kVerdict).fit.fits()
                : !gpusFit(node, pod, demand, policy_)) {
      continue;
    }
    feasible_.push_back(i);
    candidates_.push_back(candidate);
    if (claimPod) {
      const ClaimOffer& offer = offerOn(i);
      alternatives_.push_back(offer.alternative);
      placement.bestOffered = std::max(placement.bestOffered, offer.weakest);
    } else if (const GpuPick* pick = demand.gpus >= 2 && !node.state->sharesGpus
                                         ? wholeGpuPick(demand, *node.state)
                                         : nullptr) {
      // Replicas of shared GPUs offer no known set (docs/sharing.md).
      placement.bestOffered = std::max(placement.bestOffered, pick->weakest);
    }
  }
  int bestAlternative = -1;
  for (const int alternative : alternatives_) {
    if (alternative >= 0 && (bestAlternative < 0 || alternative < bestAlternative)) {
      bestAlternative = alternative;
    }
  }
  // The DRA plugin scores in kube-scheduler's profiles, not in BestFit's or Random's.
  const bool draScored =
      claimPod && options_.chooser != Chooser::kBestFit && options_.chooser != Chooser::kRandom;
  placement.feasibleNodes = static_cast<int>(feasible_.size());
  if (!demand.mig.empty()) {
    noteMigOffer(nodes_, pod, demand, policy_, placement);
  }
  // Pods without GPUs are not sent to the extender (managedResources): in-tree scores only.
  HostScores extender;
  if (options_.chooser == Chooser::kExtender && !demand.empty()) {
    extender = prioritizeNodes(&asked, candidates_, policy_);
  }
  TopNodes top(rng_);
  std::size_t chosen = 0;
  for (std::size_t j = 0; j < feasible_.size(); ++j) {
    const int wire = extender.empty() ? 0 : extender[j].wire;
    const std::int64_t draScore = draScored ? draPluginScore(alternatives_[j], bestAlternative) : 0;
    const int before = top.chosen();
    top.offer(static_cast<int>(feasible_[j]),
              nodeScore(nodes_[feasible_[j]], pod, demand, wire, options_) + draScore);
    if (top.chosen() != before) chosen = j;
  }
  placement.node = top.chosen();
  placement.tiedNodes = top.ties();
  if (placement.node < 0) {
    return placement;
  }
  if (!extender.empty()) {
    placement.score = extender[chosen].score;
    placement.wireScore = extender[chosen].wire;
  }
  const auto chosenNode = static_cast<std::size_t>(placement.node);
  // The decider judged `asked`: the pod itself, except a claim pod, which takeDra places.
  const NodeDecider* decided = decider && !claimPod ? &*decider : nullptr;
  if (take(nodes_[chosenNode], pod, demand, policy_, decided, dra_,
           claimPod ? DraPodForm::kClaimTemplate : DraPodForm::kExtendedResource, placement)) {
    if (dra_ != nullptr) {
      offers_[chosenNode] = {};  // the node changed: its offers are recomputed when asked
    }
  } else {
    // A MIG instance with no legal start; in DRA mode, a claim the allocator cannot fill on the
    // chosen node (not expected: the node's free GPUs were counted).
    placement.migInvalid = !pod.migProfile.empty();
    placement.node = -1;
  }
  return placement;
}

void PlacementEngine::release(const SimPod& pod, const PodPlacement& placement) {
  if (placement.node < 0) {
    return;
  }
  EngineNode& node = nodes_[static_cast<std::size_t>(placement.node)];
  node.cpuRequested -= pod.cpuMilli;
  node.memoryRequested -= pod.memoryMib;
  if (placement.gpus == 0 && placement.migGpu < 0 && placement.replicas == 0) {
    return;
  }
  if (dra_ != nullptr) {
    // DRA mode: the pod's claim is released, its devices free for the allocator again.
    dra_->release(std::string(node.name), placement.gpus);
    node.state = chargeNodeState(*node.labels, nullptr, policy_,
                                 dra_->nodeState(node.draNode, node.labels->topology));
    offers_[static_cast<std::size_t>(placement.node)] = {};
    return;
  }
  std::erase_if(node.usage.gpus,
                [&](int gpu) { return (placement.gpus & (GpuMask{1} << gpu)) != 0; });
  if (const auto held =
          std::find(node.usage.replicas.begin(), node.usage.replicas.end(), placement.replicas);
      placement.replicas > 0 && held != node.usage.replicas.end()) {
    node.usage.replicas.erase(held);
  }
  const auto instance =
      std::find_if(node.usage.mig.begin(), node.usage.mig.end(), [&](const MigInstanceRef& mig) {
        return mig.gpu == placement.migGpu && mig.start == placement.migStart;
      });
  if (instance != node.usage.mig.end()) {
    node.usage.mig.erase(instance);
  }
  node.state = rebuildNodeState(*node.labels, node.usage, policy_);
}

void PlacementEngine::relabel(std::size_t node, const NodeState* labels) {
  EngineNode& target = nodes_[node];
  target.labels = labels;
  target.state = rebuildNodeState(*labels, target.usage, policy_);
}

}  // namespace gte::sim
