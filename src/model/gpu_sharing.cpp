#include "model/gpu_sharing.h"

#include <charconv>

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

}  // namespace gte
