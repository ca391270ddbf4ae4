#include "model/gpu_sharing.h"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace gte {

std::string_view sharingStrategyName(SharingStrategy strategy) noexcept {
  switch (strategy) {
    case SharingStrategy::kNone:
      return "none";
    case SharingStrategy::kTimeSlicing:
      return "time-slicing";
    case SharingStrategy::kMps:
      return "mps";
    case SharingStrategy::kUnknown:
      break;
  }
  return "unknown";
}

std::optional<SharingStrategy> sharingStrategyFromName(std::string_view name) noexcept {
  if (name == "none") return SharingStrategy::kNone;
  if (name == "time-slicing") return SharingStrategy::kTimeSlicing;
  if (name == "mps") return SharingStrategy::kMps;
  return std::nullopt;
}

std::optional<GpuSharing> parseAgentSharing(std::string_view value) {
  GpuSharing out;
  if (value == "none") return out;
  const auto dot = value.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const auto strategy = sharingStrategyFromName(value.substr(0, dot));
  if (!strategy || *strategy == SharingStrategy::kNone) return std::nullopt;
  out.strategy = *strategy;
  std::string_view rest = value.substr(dot + 1);
  out.failRequestsGreaterThanOne = rest.ends_with(".f");
  if (*out.failRequestsGreaterThanOne) rest.remove_suffix(2);
  // Decimal digits only, no sign or leading zero; the plugin shares with two replicas or more.
  unsigned replicas = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), replicas);
  if (rest.empty() || rest.front() == '0' || error != std::errc() ||
      end != rest.data() + rest.size() || replicas < 2 || replicas > UINT16_MAX) {
    return std::nullopt;
  }
  out.replicas = static_cast<std::uint16_t>(replicas);
  return out;
}

std::string formatAgentSharing(const GpuSharing& sharing) {
  if (!sharing.shared() || sharing.strategy == SharingStrategy::kUnknown || sharing.replicas < 2) {
    return "none";
  }
  std::string out =
      std::string(sharingStrategyName(sharing.strategy)) + "." + std::to_string(sharing.replicas);
  if (sharing.failRequestsGreaterThanOne.value_or(false)) out += ".f";
  return out;
}

namespace {

bool replicasFrom(std::string_view value, std::uint16_t& out) {
  unsigned parsed = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error != std::errc() || end != value.data() + value.size() || parsed > UINT16_MAX) {
    return false;
  }
  out = static_cast<std::uint16_t>(parsed);
  return true;
}

}  // namespace

GpuSharing unreadableSharing(std::string what) {
  GpuSharing out;
  out.strategy = SharingStrategy::kUnknown;
  out.unreadable = std::move(what);
  return out;
}

GpuSharing readGfdSharing(const std::string* strategy, const std::string* replicas,
                          std::string_view strategyKey, std::string_view replicasKey) {
  GpuSharing out;
  if (strategy != nullptr) {
    const auto named = sharingStrategyFromName(*strategy);
    if (!named) return unreadableSharing(std::string(strategyKey) + "=" + *strategy);
    out.strategy = *named;
  }
  if (replicas != nullptr && !replicasFrom(*replicas, out.replicas)) {
    return unreadableSharing(std::string(replicasKey) + "=" + *replicas);
  }
  // GFD names a strategy exactly when a resource has more than one replica.
  if (strategy == nullptr) {
    out.strategy = out.replicas > 1 ? SharingStrategy::kUnknown : SharingStrategy::kNone;
  } else if (out.strategy == SharingStrategy::kNone && out.replicas > 1) {
    return unreadableSharing(std::string(strategyKey) + "=" + *strategy + " with " +
                             std::string(replicasKey) + "=" + *replicas);
  }
  if (!out.shared()) out.replicas = 0;
  return out;
}

std::vector<SharedMigProfile> readMigSharing(const StringMap& labels) {
  constexpr std::string_view kPrefix = "nvidia.com/mig-";
  constexpr std::string_view kStrategySuffix = ".sharing-strategy";
  constexpr std::string_view kReplicasSuffix = ".replicas";
  std::vector<std::string> profiles;
  for (const auto& [key, value] : labels) {
    const std::string_view k(key);
    if (!k.starts_with(kPrefix)) continue;
    for (const std::string_view suffix : {kStrategySuffix, kReplicasSuffix}) {
      if (k.size() > kPrefix.size() + suffix.size() && k.ends_with(suffix)) {
        profiles.emplace_back(k.substr(kPrefix.size(), k.size() - kPrefix.size() - suffix.size()));
      }
    }
  }
  std::sort(profiles.begin(), profiles.end());
  profiles.erase(std::unique(profiles.begin(), profiles.end()), profiles.end());
  std::vector<SharedMigProfile> out;
  for (std::string& profile : profiles) {
    const std::string resource = std::string(kPrefix) + profile;
    const std::string strategyKey = resource + std::string(kStrategySuffix);
    const std::string replicasKey = resource + std::string(kReplicasSuffix);
    GpuSharing sharing = readGfdSharing(findValue(labels, strategyKey),
                                        findValue(labels, replicasKey), strategyKey, replicasKey);
    if (sharing.shared()) out.push_back(SharedMigProfile{std::move(profile), std::move(sharing)});
  }
  return out;
}

}  // namespace gte
