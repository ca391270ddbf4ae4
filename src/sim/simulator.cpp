#include "sim/simulator.h"

#include <optional>
#include <utility>

#include "sim/template_nodes.h"

namespace gte::sim {
namespace {

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

}  // namespace

SimRun simulate(std::span<const SimNodeSpec> cluster, std::span<const SimPod> arrivals,
                const Policy& policy, const SimOptions& options) {
  std::optional<SimDraCluster> dra;
  if (options.draOrder != DraDeviceOrder::kOff) {
    dra.emplace();
  }
  SimDraCluster* const draCluster = dra ? &*dra : nullptr;
  TemplateNodes built = templateEngineNodes(cluster, policy, draCluster, options);
  SimRun run;
  run.capacityGpus = built.capacityGpus;
  run.capacitySlices = built.capacitySlices;
  run.capacityMigSlices = built.capacityMigSlices;
  PlacementEngine engine(std::move(built.nodes), policy, options, draCluster);
  const SizeShares shares = requestShares(arrivals);
  std::size_t nextFragmentation = 0;
  std::vector<NodeStateConstSharedPtr> states;
  std::int64_t arrived = 0;
  std::int64_t allocated = 0;
  std::int64_t arrivedSlices = 0;
  std::int64_t allocatedMigSlices = 0;
  for (const SimPod& pod : arrivals) {
    PodPlacement placement = engine.place(pod, simPodDemand(pod, policy));
    arrived += pod.gpus;
    arrivedSlices += pod.demandSlices();
    if (placement.node >= 0) {
      allocated += pod.gpus;
      allocatedMigSlices += pod.migSlices;
    }
    placement.arrivedGpus = arrived;
    placement.allocatedGpus = allocated;
    placement.arrivedSlices = arrivedSlices;
    placement.allocatedMigSlices = allocatedMigSlices;
    run.placements.push_back(placement);
    while (nextFragmentation < options.fragmentationAt.size() &&
           arrived * 100 >= run.capacityGpus * options.fragmentationAt[nextFragmentation]) {
      states.clear();
      for (const EngineNode& node : engine.nodes()) {
        states.push_back(node.state);
      }
      Fragmentation point = measureFragmentation(states, shares);
      point.percent = options.fragmentationAt[nextFragmentation++];
      run.fragmentation.push_back(point);
    }
  }
  for (const EngineNode& node : engine.nodes()) {
    run.finalStates.push_back(node.state);
  }
  return run;
}

}  // namespace gte::sim
