#include "core/gpu_sharing.h"

#include "model/gpu_request.h"

#include <limits>
#include <optional>

namespace gte {
namespace {

GpuSharing fromAllocatable(const NodeInfo& node, int wholeGpus, bool migModeGpus,
                           std::int64_t allocatable) {
  GpuSharing out;
  // The device plugin's renamed replicas (renameByDefault): shared by a strategy not named.
  if (const Quantity* renamed = node.allocatable.find(kSharedGpuResource);
      renamed != nullptr && renamed->wholeUnits().value_or(0) > 0) {
    allocatable = renamed->wholeUnits().value_or(0);
    if (wholeGpus <= 0) {
      out.strategy = SharingStrategy::kUnknown;
      return out;
    }
  }
  if (!migModeGpus && wholeGpus > 0 && allocatable > wholeGpus) {
    out.strategy = SharingStrategy::kUnknown;
    if (allocatable % wholeGpus == 0 &&
        allocatable / wholeGpus <= std::numeric_limits<std::uint16_t>::max()) {
      out.replicas = static_cast<std::uint16_t>(allocatable / wholeGpus);
    }
  }
  return out;
}

}  // namespace

GpuSharing readGpuSharing(const NodeInfo& node, std::string_view labelPrefix, int wholeGpus,
                          bool migModeGpus, std::int64_t allocatable) {
  const std::string agentKey = std::string(labelPrefix) + std::string(kAgentSharingKey);
  const std::string* agentValue = findValue(node.labels, agentKey);
  std::optional<GpuSharing> agent;
  if (agentValue != nullptr) agent = parseAgentSharing(*agentValue);
  const std::string* strategy = findValue(node.labels, kSharingStrategyLabel);
  const std::string* replicas = findValue(node.labels, kSharingReplicasLabel);
  if (strategy != nullptr || replicas != nullptr) {
    // GFD reads the configuration the plugin runs with; the agent's reading adds the flag GFD
    // does not publish, where both name the same strategy.
    GpuSharing out =
        readGfdSharing(strategy, replicas, kSharingStrategyLabel, kSharingReplicasLabel);
    if (agent && agent->strategy == out.strategy && out.shared()) {
      out.failRequestsGreaterThanOne = agent->failRequestsGreaterThanOne;
      if (out.replicas == 0) out.replicas = agent->replicas;
    }
    return out;
  }
  if (agentValue != nullptr && !agent) return unreadableSharing(agentKey + "=" + *agentValue);
  if (agent && agent->shared()) return *agent;
  // `none` from the agent, or no label: an allocatable that replicates GPUs still reads shared.
  return fromAllocatable(node, wholeGpus, migModeGpus, allocatable);
}

}  // namespace gte
