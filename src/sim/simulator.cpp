#include "sim/simulator.h"

#include <algorithm>
#include <map>
#include <random>

#include "core/fit.h"
#include "core/predict_allocation.h"
#include "prioritize/prioritize_nodes.h"

namespace gte::sim {
namespace {

struct SimNode {
  const SimNodeSpec* spec = nullptr;
  const NodeState* labels = nullptr;  // the template's labels as read, no usage (shared)
  NodeStateConstSharedPtr state;
  NodeUsage usage;
  std::int64_t cpuRequested = 0;
  std::int64_t memoryRequested = 0;
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

bool gpusFit(const SimNode& node, const PodDemand& demand, const Policy& policy, Chooser chooser) {
  if (demand.gpus == 0) {
    return true;
  }
  if (chooser == Chooser::kExtender) {
    return checkFit(demand, *node.state, policy).fits();
  }
  return node.state->freeCount >= demand.gpus;  // kube-scheduler sees the count only
}

NodeLoad loadAfter(const SimNode& node, const SimPod& pod) {
  return NodeLoad{node.spec->cpuMilli,  node.cpuRequested + pod.cpuMilli,
                  node.spec->memoryMib, node.memoryRequested + pod.memoryMib,
                  node.state->gpuCount, node.state->gpuCount - node.state->freeCount + pod.gpus};
}

// `wire` is the extender's 0..10 answer for this node (prioritizeNodes over the feasible nodes).
std::int64_t nodeScore(const SimNode& node, const SimPod& pod, const PodDemand& demand, int wire,
                       const SimOptions& options) {
  const NodeLoad load = loadAfter(node, pod);
  switch (options.chooser) {
    case Chooser::kExtender:
      if (demand.gpus == 0 && options.cpuPodsInTree) {
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

void place(SimNode& node, const SimPod& pod, const PodDemand& demand, const Policy& policy,
           PodPlacement& placement) {
  node.cpuRequested += pod.cpuMilli;
  node.memoryRequested += pod.memoryMib;
  if (demand.gpus == 0) {
    return;
  }
  if (demand.gpus >= 2) {
    placement.weakest = wholeGpuPick(demand, *node.state)->weakest;
  }
  const Allocation allocation = predictAllocation(demand, *node.state);
  for (const int gpu : allocation.gpus) {
    placement.gpus |= GpuMask{1} << gpu;
  }
  addToUsage(node.usage, allocation);
  node.state = rebuildNodeState(*node.labels, node.usage, policy);
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
  for (const SimNodeSpec& spec : cluster) {
    auto& shared = templates[spec.machine];
    if (shared.first == nullptr) {
      const NodeInfo info = makeTemplateNode(*spec.machine, spec.machine->name, policy.labelPrefix);
      shared.first = readNodeState(info, policy);
      shared.second = rebuildNodeState(*shared.first, NodeUsage{}, policy);
    }
    nodes.push_back(SimNode{&spec, shared.first.get(), shared.second, {}, 0, 0});
    run.capacityGpus += shared.second->gpuCount;
  }
  const SizeShares shares = requestShares(arrivals);
  std::size_t nextFragmentation = 0;
  std::mt19937_64 rng(options.seed);
  std::vector<std::size_t> feasible;
  std::vector<NodeCandidate> candidates;
  std::int64_t arrived = 0;
  std::int64_t allocated = 0;
  for (const SimPod& pod : arrivals) {
    PodDemand demand;
    demand.gpus = pod.gpus;
    demand.strategy = policy.defaultStrategy;
    PodPlacement placement;
    feasible.clear();
    candidates.clear();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const SimNode& node = nodes[i];
      if (!resourcesFit(node, pod) || !gpusFit(node, demand, policy, options.chooser)) {
        continue;
      }
      feasible.push_back(i);
      candidates.push_back(NodeCandidate{node.spec->name, node.state.get(), {}});
      if (demand.gpus >= 2) {
        placement.bestOffered =
            std::max(placement.bestOffered, wholeGpuPick(demand, *node.state)->weakest);
      }
    }
    placement.feasibleNodes = static_cast<int>(feasible.size());
    // Pods without GPUs are not sent to the extender (managedResources): in-tree scores only.
    HostScores extender;
    if (options.chooser == Chooser::kExtender && demand.gpus > 0) {
      extender = prioritizeNodes(&demand, candidates, policy);
    }
    TopNodes top(rng);
    for (std::size_t j = 0; j < feasible.size(); ++j) {
      const int wire = extender.empty() ? 0 : extender[j].wire;
      top.offer(static_cast<int>(feasible[j]),
                nodeScore(nodes[feasible[j]], pod, demand, wire, options));
    }
    arrived += pod.gpus;
    placement.node = top.chosen();
    if (placement.node >= 0) {
      place(nodes[static_cast<std::size_t>(placement.node)], pod, demand, policy, placement);
      allocated += pod.gpus;
    }
    placement.arrivedGpus = arrived;
    placement.allocatedGpus = allocated;
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
