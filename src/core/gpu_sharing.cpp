#include "core/gpu_sharing.h"

#include "model/gpu_request.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <optional>

namespace gte {
namespace {

const std::string* label(const NodeInfo& node, std::string_view key) {
  const auto it = node.labels.find(std::string(key));
  return it == node.labels.end() ? nullptr : &it->second;
}

// GFD writes `none` for a resource nobody replicates; anything else it writes is one of two names.
bool strategyFrom(std::string_view value, SharingStrategy& out) {
  const auto strategy = sharingStrategyFromName(value);
  if (strategy) out = *strategy;
  return strategy.has_value();
}

bool replicasFrom(std::string_view value, std::uint16_t& out) {
  unsigned parsed = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error != std::errc() || end != value.data() + value.size() ||
      parsed > std::numeric_limits<std::uint16_t>::max()) {
    return false;
  }
  out = static_cast<std::uint16_t>(parsed);
  return true;
}

GpuSharing unreadable(std::string what) {
  GpuSharing out;
  out.strategy = SharingStrategy::kUnknown;
  out.unreadable = std::move(what);
  return out;
}

// GFD's pair for one resource: `<resource>.sharing-strategy` and `<resource>.replicas`, named in
// what an unreadable pair reports.
GpuSharing fromGfdLabels(const std::string* strategy, const std::string* replicas,
                         std::string_view strategyKey, std::string_view replicasKey) {
  GpuSharing out;
  if (strategy != nullptr && !strategyFrom(*strategy, out.strategy)) {
    return unreadable(std::string(strategyKey) + "=" + *strategy);
  }
  if (replicas != nullptr && !replicasFrom(*replicas, out.replicas)) {
    return unreadable(std::string(replicasKey) + "=" + *replicas);
  }
  // GFD names a strategy exactly when a resource has more than one replica. Releases before the
  // strategy label wrote only the replicas (time-slicing then): more than one is sharing by a
  // strategy not named. A strategy of `none` with replicas is not what any release writes.
  if (strategy == nullptr) {
    out.strategy = out.replicas > 1 ? SharingStrategy::kUnknown : SharingStrategy::kNone;
  } else if (out.strategy == SharingStrategy::kNone && out.replicas > 1) {
    return unreadable(std::string(strategyKey) + "=" + *strategy + " with " +
                      std::string(replicasKey) + "=" + *replicas);
  }
  if (!out.shared()) out.replicas = 0;
  return out;
}

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
  const std::string* agentValue = label(node, agentKey);
  std::optional<GpuSharing> agent;
  if (agentValue != nullptr) agent = parseAgentSharing(*agentValue);
  const std::string* strategy = label(node, kSharingStrategyLabel);
  const std::string* replicas = label(node, kSharingReplicasLabel);
  if (strategy != nullptr || replicas != nullptr) {
    // GFD reads the configuration the plugin runs with; the agent's reading adds the flag GFD
    // does not publish, where both name the same strategy.
    GpuSharing out =
        fromGfdLabels(strategy, replicas, kSharingStrategyLabel, kSharingReplicasLabel);
    if (agent && agent->strategy == out.strategy && out.shared()) {
      out.failRequestsGreaterThanOne = agent->failRequestsGreaterThanOne;
      if (out.replicas == 0) out.replicas = agent->replicas;
    }
    return out;
  }
  if (agentValue != nullptr && !agent) return unreadable(agentKey + "=" + *agentValue);
  if (agent && agent->shared()) return *agent;
  // `none` from the agent, or no label: an allocatable that replicates GPUs still reads shared.
  return fromAllocatable(node, wholeGpus, migModeGpus, allocatable);
}

std::vector<SharedMigProfile> readMigSharing(const NodeInfo& node) {
  constexpr std::string_view kStrategySuffix = ".sharing-strategy";
  constexpr std::string_view kReplicasSuffix = ".replicas";
  std::vector<SharedMigProfile> out;
  // Labels are sorted by key, so a profile's two labels are met in order of its name; collect the
  // profile names first.
  std::vector<std::string> profiles;
  for (const auto& [key, value] : node.labels) {
    const std::string_view k(key);
    if (!k.starts_with(kMigResourcePrefix)) continue;
    for (const std::string_view suffix : {kStrategySuffix, kReplicasSuffix}) {
      if (k.size() > kMigResourcePrefix.size() + suffix.size() && k.ends_with(suffix)) {
        std::string profile(k.substr(kMigResourcePrefix.size(),
                                     k.size() - kMigResourcePrefix.size() - suffix.size()));
        if (profiles.empty() || profiles.back() != profile) profiles.push_back(std::move(profile));
      }
    }
  }
  std::sort(profiles.begin(), profiles.end());
  profiles.erase(std::unique(profiles.begin(), profiles.end()), profiles.end());
  for (std::string& profile : profiles) {
    const std::string resource = std::string(kMigResourcePrefix) + profile;
    const std::string strategyKey = resource + std::string(kStrategySuffix);
    const std::string replicasKey = resource + std::string(kReplicasSuffix);
    GpuSharing sharing =
        fromGfdLabels(label(node, strategyKey), label(node, replicasKey), strategyKey, replicasKey);
    if (sharing.shared()) out.push_back(SharedMigProfile{std::move(profile), std::move(sharing)});
  }
  return out;
}

}  // namespace gte
