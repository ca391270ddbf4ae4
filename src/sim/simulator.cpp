#include "sim/simulator.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <optional>
#include <random>

#include "core/dra_decision.h"
#include "core/fit.h"
#include "core/node_decider.h"
#include "core/predict_allocation.h"
#include "prioritize/prioritize_nodes.h"
#include "sim/mig_slices.h"

namespace gte::sim {
namespace {

struct SimNode {
  const SimNodeSpec* spec = nullptr;
  const NodeState* labels = nullptr;  // the template's labels as read, no usage (shared)
  NodeStateConstSharedPtr state;
  NodeUsage usage;
  std::int64_t cpuRequested = 0;
  std::int64_t memoryRequested = 0;
  NodeInfo draNode;  // DRA mode: the node as its DRA state is built from (name, labels)
};

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

 private:
  std::mt19937_64& rng_;
  int chosen_ = -1;
  int ties_ = 0;
  std::int64_t best_ = 0;
};

bool resourcesFit(const SimNode& node, const SimPod& pod) {
  return node.cpuRequested + pod.cpuMilli <= node.spec->cpuMilli &&
         node.memoryRequested + pod.memoryMib <= node.spec->memoryMib;
}

// The pod's MIG profile in this node's product table; nullptr for a node without MIG or a pod
// without a MIG request.
const MigProfile* migProfileOn(const SimNode& node, const SimPod& pod) {
  if (pod.migProfile.empty() || !node.state->migProduct) {
    return nullptr;
  }
  return node.state->migProduct->findByName(pod.migProfile);
}

bool gpusFit(const SimNode& node, const SimPod& pod, const PodDemand& demand, const Policy& policy,
             Chooser chooser) {
  if (demand.empty()) {
    return true;
  }
  if (chooser == Chooser::kExtender) {
    return checkFit(demand, *node.state, policy).fits();
  }
  if (!demand.mig.empty()) {
    // A MIG-naive scheduler sees the free instances per profile (the device plugin's counts,
    // exact) and, with dynamic MIG, counts unpartitioned slices: where they lie it does not know.
    const MigProfile* profile = migProfileOn(node, pod);
    return profile != nullptr && (freeInstanceExists(*node.state, *profile) ||
                                  (policy.dynamicMig && sliceCountsFit(*node.state, *profile)));
  }
  return node.state->freeCount >= demand.gpus;  // kube-scheduler sees the count only
}

// nvidia.com/gpu as kube-scheduler sees it: the GPUs not in MIG mode.
NodeLoad loadAfter(const SimNode& node, const SimPod& pod) {
  return NodeLoad{
      node.spec->cpuMilli,     node.cpuRequested + pod.cpuMilli,
      node.spec->memoryMib,    node.memoryRequested + pod.memoryMib,
      node.state->usableCount, node.state->usableCount - node.state->freeCount + pod.gpus};
}

// `wire` is the extender's 0..10 answer for this node (prioritizeNodes over the feasible nodes).
std::int64_t nodeScore(const SimNode& node, const SimPod& pod, const PodDemand& demand, int wire,
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

SizeShares requestShares(std::span<const SimPod> arrivals) {
  SizeShares shares{};
  double total = 0;
  for (const SimPod& pod : arrivals) {
    if (pod.gpus > 0 && pod.gpus < static_cast<int>(shares.size())) {
      shares[static_cast<std::size_t>(pod.gpus)] += 1;
      total += 1;
    }
  }
  for (double& share : shares) {
    share = total == 0 ? 0 : share / total;
  }
  return shares;
}

GpuMask draGpus(const DraNodeState& state, const dra::FirstFitResult& result) {
  GpuMask gpus = 0;
  for (const dra::PickedDevice& picked : result.devices) {
    const int gpu = state.deviceGpus[picked.position].gpu;
    gpus |= gpu >= 0 ? GpuMask{1} << gpu : 0;
  }
  return gpus;
}

// What the DRA allocator gives a claim on a node as it is: the firstAvailable alternative it
// takes (-1: none) and the weakest link of the set. Cached per node and GPU count until a pod
// lands on the node.
struct ClaimOffer {
  bool known = false;
  int alternative = -1;
  LinkClass weakest = LinkClass::kUnknown;
};

ClaimOffer claimOffer(const SimNode& node, const dra::ClaimProgram& claim) {
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
bool placeDra(SimNode& node, const SimPod& pod, const Policy& policy, SimDraCluster& dra,
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
  dra.allocate(state->devices, result.devices);
  node.cpuRequested += pod.cpuMilli;
  node.memoryRequested += pod.memoryMib;
  node.state = chargeNodeState(*node.labels, nullptr, policy,
                               dra.nodeState(node.draNode, node.labels->topology));
  return true;
}

// False when the pod cannot run there: a MIG instance with no legal free placement on the node
// (only a MIG-naive chooser picks such a node). Nothing is taken then.
bool place(SimNode& node, const SimPod& pod, const PodDemand& demand, const Policy& policy,
           SimDraCluster* dra, DraPodForm form, PodPlacement& placement) {
  if (demand.empty()) {
    node.cpuRequested += pod.cpuMilli;
    node.memoryRequested += pod.memoryMib;
    return true;
  }
  if (dra != nullptr && demand.mig.empty()) {
    return placeDra(node, pod, policy, *dra, dra->claim(form, pod.gpus), placement);
  }
  const Allocation allocation = predictAllocation(demand, *node.state);
  if (!allocation.complete) {
    return false;
  }
  node.cpuRequested += pod.cpuMilli;
  node.memoryRequested += pod.memoryMib;
  if (demand.gpus >= 2) {
    placement.weakest = wholeGpuPick(demand, *node.state)->weakest;
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
void noteMigOffer(std::span<const SimNode> nodes, const SimPod& pod, const PodDemand& demand,
                  const Policy& policy, PodPlacement& placement) {
  for (const SimNode& node : nodes) {
    if (!resourcesFit(node, pod) || (placement.migCountsFit && placement.migLegal)) {
      continue;
    }
    const MigProfile* profile = migProfileOn(node, pod);
    placement.migCountsFit = placement.migCountsFit || (policy.dynamicMig && profile != nullptr &&
                                                        sliceCountsFit(*node.state, *profile));
    placement.migLegal = placement.migLegal || checkFit(demand, *node.state, policy).fits();
  }
}

}  // namespace

SimRun simulate(std::span<const SimNodeSpec> cluster, std::span<const SimPod> arrivals,
                const Policy& policy, const SimOptions& options) {
  // One labels read and one empty state per template: nodes share them until a pod lands.
  std::map<const NodeTemplate*, std::pair<NodeStateConstSharedPtr, NodeStateConstSharedPtr>>
      templates;
  std::vector<SimNode> nodes;
  std::vector<NodeStateConstSharedPtr> states;
  SimRun run;
  std::optional<SimDraCluster> dra;
  if (options.draOrder != DraDeviceOrder::kOff) {
    dra.emplace();
  }
  // The driver's device order per node: its own stream, so tie-breaking draws stay as without DRA.
  std::mt19937_64 orderRng(options.seed ^ 0x9e3779b97f4a7c15ULL);
  for (const SimNodeSpec& spec : cluster) {
    auto& shared = templates[spec.machine];
    if (shared.first == nullptr) {
      const NodeInfo info =
          dra ? makeDraTemplateNode(*spec.machine, spec.machine->name, policy.labelPrefix)
              : makeTemplateNode(*spec.machine, spec.machine->name, policy.labelPrefix);
      shared.first = readNodeState(info, policy);
      shared.second = rebuildNodeState(*shared.first, NodeUsage{}, policy);
    }
    nodes.push_back(SimNode{&spec, shared.first.get(), shared.second, {}, 0, 0, {}});
    if (dra) {
      // GPUs in MIG mode are not whole-GPU devices: the slice lists the others.
      std::vector<int> order;
      for (int gpu = 0; gpu < spec.machine->gpus; ++gpu) {
        const auto g = static_cast<std::size_t>(gpu);
        if (g >= spec.machine->mig.size() || spec.machine->mig[g] != '1') {
          order.push_back(gpu);
        }
      }
      if (options.draOrder == DraDeviceOrder::kShuffled) {
        std::shuffle(order.begin(), order.end(), orderRng);
      }
      dra->publish(*spec.machine, spec.name, order);
      SimNode& node = nodes.back();
      node.draNode = makeDraTemplateNode(*spec.machine, spec.name, policy.labelPrefix);
      node.state = chargeNodeState(*shared.first, nullptr, policy,
                                   dra->nodeState(node.draNode, shared.first->topology));
    }
    const NodeState& empty = *nodes.back().state;
    run.capacityGpus += empty.usableCount;
    run.capacitySlices += static_cast<std::int64_t>(empty.gpuCount) * kMigMemorySlices;
    run.capacityMigSlices += empty.migSlicesTotal;
  }
  const SizeShares shares = requestShares(arrivals);
  std::size_t nextFragmentation = 0;
  std::mt19937_64 rng(options.seed);
  std::vector<std::size_t> feasible;
  std::vector<NodeCandidate> candidates;
  std::int64_t arrived = 0;
  std::int64_t allocated = 0;
  std::int64_t arrivedSlices = 0;
  std::int64_t allocatedMigSlices = 0;
  // Claim-template pods: per node and GPU count, what the allocator would take there.
  constexpr int kOfferSizes = 33;
  std::vector<std::array<ClaimOffer, kOfferSizes>> offers(dra ? nodes.size() : 0);
  std::vector<int> alternatives;
  for (const SimPod& pod : arrivals) {
    PodDemand demand;
    demand.gpus = pod.gpus;
    if (!pod.migProfile.empty()) {
      demand.mig.push_back(MigRequest{migResourceSuffix(pod.migProfile), 1});
    }
    demand.strategy = policy.defaultStrategy;
    // A claim-template pod asks the extender through its claim, not nvidia.com/gpu; the
    // baselines see its GPU count (the DRA filter fits a node iff the last tier, any N, does).
    const bool claimPod = dra && options.draPods == DraPodForm::kClaimTemplate && pod.gpus >= 2 &&
                          pod.gpus < kOfferSizes && pod.migProfile.empty();
    PodDemand claimDemand;
    if (claimPod) {
      claimDemand = demand;
      claimDemand.gpus = 0;
      claimDemand.dra = dra->templateDemand(pod.gpus);
    }
    const PodDemand& asked = claimPod ? claimDemand : demand;
    std::optional<NodeDecider> decider;
    if (claimPod && options.chooser == Chooser::kExtender) {
      decider.emplace(asked, policy);
    }
    const auto offerOn = [&](std::size_t i) -> const ClaimOffer& {
      ClaimOffer& offer = offers[i][static_cast<std::size_t>(pod.gpus)];
      if (!offer.known) {
        offer = claimOffer(nodes[i], dra->claim(DraPodForm::kClaimTemplate, pod.gpus));
      }
      return offer;
    };
    PodPlacement placement;
    feasible.clear();
    candidates.clear();
    alternatives.clear();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const SimNode& node = nodes[i];
      if (!resourcesFit(node, pod)) {
        continue;
      }
      const NodeCandidate candidate{node.spec->name, node.state.get(), {}, nullptr};
      if (decider ? !decider->fit(candidate).fits()
                  : !gpusFit(node, pod, demand, policy, options.chooser)) {
        continue;
      }
      feasible.push_back(i);
      candidates.push_back(candidate);
      if (claimPod) {
        const ClaimOffer& offer = offerOn(i);
        alternatives.push_back(offer.alternative);
        placement.bestOffered = std::max(placement.bestOffered, offer.weakest);
      } else if (demand.gpus >= 2) {
        placement.bestOffered =
            std::max(placement.bestOffered, wholeGpuPick(demand, *node.state)->weakest);
      }
    }
    int bestAlternative = -1;
    for (const int alternative : alternatives) {
      if (alternative >= 0 && (bestAlternative < 0 || alternative < bestAlternative)) {
        bestAlternative = alternative;
      }
    }
    // The DRA plugin scores in kube-scheduler's profiles, not in BestFit's or Random's.
    const bool draScored =
        claimPod && options.chooser != Chooser::kBestFit && options.chooser != Chooser::kRandom;
    placement.feasibleNodes = static_cast<int>(feasible.size());
    if (!demand.mig.empty()) {
      noteMigOffer(nodes, pod, demand, policy, placement);
    }
    // Pods without GPUs are not sent to the extender (managedResources): in-tree scores only.
    HostScores extender;
    if (options.chooser == Chooser::kExtender && !demand.empty()) {
      extender = prioritizeNodes(&asked, candidates, policy);
    }
    TopNodes top(rng);
    for (std::size_t j = 0; j < feasible.size(); ++j) {
      const int wire = extender.empty() ? 0 : extender[j].wire;
      const std::int64_t draScore =
          draScored ? draPluginScore(alternatives[j], bestAlternative) : 0;
      top.offer(static_cast<int>(feasible[j]),
                nodeScore(nodes[feasible[j]], pod, demand, wire, options) + draScore);
    }
    arrived += pod.gpus;
    arrivedSlices += pod.demandSlices();
    placement.node = top.chosen();
    if (placement.node >= 0) {
      const auto chosen = static_cast<std::size_t>(placement.node);
      if (place(nodes[chosen], pod, demand, policy, dra ? &*dra : nullptr,
                claimPod ? DraPodForm::kClaimTemplate : DraPodForm::kExtendedResource, placement)) {
        if (dra) {
          offers[chosen] = {};  // the node changed: its offers are recomputed when asked
        }
        allocated += pod.gpus;
        allocatedMigSlices += pod.migSlices;
      } else {
        // A MIG instance with no legal start; in DRA mode, a claim the allocator cannot fill
        // on the chosen node (not expected: the node's free GPUs were counted).
        placement.migInvalid = !pod.migProfile.empty();
        placement.node = -1;
      }
    }
    placement.arrivedGpus = arrived;
    placement.allocatedGpus = allocated;
    placement.arrivedSlices = arrivedSlices;
    placement.allocatedMigSlices = allocatedMigSlices;
    run.placements.push_back(placement);
    while (nextFragmentation < options.fragmentationAt.size() &&
           arrived * 100 >= run.capacityGpus * options.fragmentationAt[nextFragmentation]) {
      states.clear();
      for (const SimNode& node : nodes) {
        states.push_back(node.state);
      }
      Fragmentation point = measureFragmentation(states, shares);
      point.percent = options.fragmentationAt[nextFragmentation++];
      run.fragmentation.push_back(point);
    }
  }
  return run;
}

}  // namespace gte::sim
