#include "sim/live_replay.h"

#include <cstddef>

#include "core/node_charges.h"

namespace gte::sim {
namespace {

void add(FreeSetCounts& total, const FreeSetCounts& counts, int sign) {
  for (std::size_t i = 0; i < total.size(); ++i) {
    total[i] += sign * counts[i];
  }
}

// The extender's only chooser, ranking by its score alone: in-tree plugins see CPU and memory,
// which the replay does not model.
SimOptions extenderOnly() {
  SimOptions options;
  options.chooser = Chooser::kExtender;
  options.inTree = InTree::kNone;
  options.fragmentationAt.clear();
  return options;
}

}  // namespace

LiveReplay replayOnLiveStates(std::span<const LiveNode> nodes, std::span<const ReplayPod> pods,
                              const Policy& policy, bool rebuild,
                              const std::function<bool()>& keepGoing) {
  LiveReplay replay;
  std::vector<EngineNode> engineNodes;
  std::vector<FreeSetCounts> sets;
  engineNodes.reserve(nodes.size());
  sets.reserve(nodes.size());
  for (const LiveNode& live : nodes) {
    EngineNode node;
    node.name = live.name;
    node.labels = live.state.get();
    node.usage = chargedUsage(*live.state);
    node.state = rebuild ? rebuildNodeState(*live.state, node.usage, policy) : live.state;
    sets.push_back(freeNvlinkSets(*node.state));
    add(replay.clusterBefore, sets.back(), 1);
    engineNodes.push_back(std::move(node));
  }
  PlacementEngine engine(std::move(engineNodes), policy, extenderOnly());
  FreeSetCounts cluster = replay.clusterBefore;
  replay.steps.reserve(pods.size());
  for (const ReplayPod& pod : pods) {
    if (!keepGoing()) break;
    ReplayStep step;
    step.asksForGpus = !pod.demand.empty();
    if (step.asksForGpus) {
      step.placement = engine.place(pod.pod, pod.demand);
    }
    if (step.placement.node >= 0) {
      const auto at = static_cast<std::size_t>(step.placement.node);
      step.nodeBefore = sets[at];
      sets[at] = freeNvlinkSets(*engine.nodes()[at].state);
      step.nodeAfter = sets[at];
      add(cluster, step.nodeBefore, -1);
      add(cluster, step.nodeAfter, 1);
    }
    step.clusterAfter = cluster;
    replay.steps.push_back(step);
  }
  return replay;
}

}  // namespace gte::sim
