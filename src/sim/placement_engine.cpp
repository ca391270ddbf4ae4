#include "sim/placement_engine.h"

#include <algorithm>
#include <utility>

#include "core/fit.h"
#include "core/predict_allocation.h"
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

bool resourcesFit(const EngineNode& node, const SimPod& pod) {
  return node.cpuRequested + pod.cpuMilli <= node.cpuMilli &&
         node.memoryRequested + pod.memoryMib <= node.memoryMib;
}

// The pod's MIG profile in this node's product table; nullptr for a node without MIG or a pod
// without a MIG request.
const MigProfile* migProfileOn(const EngineNode& node, const SimPod& pod) {
  if (pod.migProfile.empty() || !node.state->migProduct) {
    return nullptr;
  }
  return node.state->migProduct->findByName(pod.migProfile);
}

bool gpusFit(const EngineNode& node, const SimPod& pod, const PodDemand& demand,
             const Policy& policy, Chooser chooser) {
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
NodeLoad loadAfter(const EngineNode& node, const SimPod& pod) {
  return NodeLoad{
      node.cpuMilli,           node.cpuRequested + pod.cpuMilli,
      node.memoryMib,          node.memoryRequested + pod.memoryMib,
      node.state->usableCount, node.state->usableCount - node.state->freeCount + pod.gpus};
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

// False when the pod cannot run there: a MIG instance with no legal free placement on the node
// (only a MIG-naive chooser picks such a node). Nothing is taken then.
bool take(EngineNode& node, const SimPod& pod, const PodDemand& demand, const Policy& policy,
          PodPlacement& placement) {
  if (demand.empty()) {
    node.cpuRequested += pod.cpuMilli;
    node.memoryRequested += pod.memoryMib;
    return true;
  }
  const Allocation allocation = predictAllocation(demand, *node.state);
  if (!allocation.complete) {
    return false;
  }
  node.cpuRequested += pod.cpuMilli;
  node.memoryRequested += pod.memoryMib;
  if (const GpuPick* pick = demand.gpus >= 1 ? wholeGpuPick(demand, *node.state) : nullptr) {
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
  for (const EngineNode& node : nodes) {
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

PodDemand simPodDemand(const SimPod& pod, const Policy& policy) {
  PodDemand demand;
  demand.gpus = pod.gpus;
  if (!pod.migProfile.empty()) {
    demand.mig.push_back(MigRequest{migResourceSuffix(pod.migProfile), 1});
  }
  demand.strategy = policy.defaultStrategy;
  return demand;
}

PlacementEngine::PlacementEngine(std::vector<EngineNode> nodes, const Policy& policy,
                                 SimOptions options)
    : nodes_(std::move(nodes)),
      policy_(policy),
      options_(std::move(options)),
      rng_(options_.seed) {}

PodPlacement PlacementEngine::place(const SimPod& pod, const PodDemand& demand) {
  PodPlacement placement;
  feasible_.clear();
  candidates_.clear();
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const EngineNode& node = nodes_[i];
    if (!resourcesFit(node, pod) || !gpusFit(node, pod, demand, policy_, options_.chooser)) {
      continue;
    }
    feasible_.push_back(i);
    candidates_.push_back(NodeCandidate{node.name, node.state.get(), {}});
    if (demand.gpus >= 2) {
      placement.bestOffered =
          std::max(placement.bestOffered, wholeGpuPick(demand, *node.state)->weakest);
    }
  }
  placement.feasibleNodes = static_cast<int>(feasible_.size());
  if (!demand.mig.empty()) {
    noteMigOffer(nodes_, pod, demand, policy_, placement);
  }
  // Pods without GPUs are not sent to the extender (managedResources): in-tree scores only.
  HostScores extender;
  if (options_.chooser == Chooser::kExtender && !demand.empty()) {
    extender = prioritizeNodes(&demand, candidates_, policy_);
  }
  TopNodes top(rng_);
  std::size_t chosen = 0;
  for (std::size_t j = 0; j < feasible_.size(); ++j) {
    const int wire = extender.empty() ? 0 : extender[j].wire;
    const int before = top.chosen();
    top.offer(static_cast<int>(feasible_[j]),
              nodeScore(nodes_[feasible_[j]], pod, demand, wire, options_));
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
  if (!take(nodes_[static_cast<std::size_t>(placement.node)], pod, demand, policy_, placement)) {
    placement.migInvalid = true;
    placement.node = -1;
  }
  return placement;
}

}  // namespace gte::sim
