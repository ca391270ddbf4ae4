#include "cluster/gpu_annotation.h"

#include <algorithm>
#include <charconv>

namespace gte::cluster {
namespace {

bool parseIndex(std::string_view text, int& out) {
  if (text.empty()) return false;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), out);
  return result.ec == std::errc() && result.ptr == text.data() + text.size() && out >= 0;
}

Error badToken(std::string_view token) {
  return invalidArgument("gpus annotation: bad entry \"" + std::string(token) +
                         "\" (want a GPU index, mig:<gpu>:<profile>@<start> or replicas:<count>)");
}

// "mig:<gpu>:<profile>@<start>"
Result<MigAssignment> parseMigToken(std::string_view token) {
  std::string_view rest = token.substr(4);
  const std::size_t colon = rest.find(':');
  const std::size_t at = rest.rfind('@');
  if (colon == std::string_view::npos || at == std::string_view::npos || at < colon + 2) {
    return badToken(token);
  }
  MigAssignment instance;
  if (!parseIndex(rest.substr(0, colon), instance.gpu) ||
      !parseIndex(rest.substr(at + 1), instance.start)) {
    return badToken(token);
  }
  instance.profile = std::string(rest.substr(colon + 1, at - colon - 1));
  return instance;
}

}  // namespace

std::string formatGpuAnnotation(const Allocation& allocation) {
  std::string out;
  auto separate = [&out] {
    if (!out.empty()) out.push_back(',');
  };
  for (const int gpu : allocation.gpus) {
    separate();
    out += std::to_string(gpu);
  }
  for (const MigAssignment& instance : allocation.mig) {
    separate();
    out += "mig:" + std::to_string(instance.gpu) + ":" + instance.profile + "@" +
           std::to_string(instance.start);
  }
  if (allocation.replicas > 0) {
    separate();
    out.append(kReplicasToken).append(std::to_string(allocation.replicas));
  }
  return out;
}

Result<Allocation> parseGpuAnnotation(std::string_view value) {
  Allocation allocation;
  allocation.complete = true;
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    const std::string_view token = value.substr(0, comma);
    value = comma == std::string_view::npos ? std::string_view() : value.substr(comma + 1);
    if (token.rfind("mig:", 0) == 0) {
      auto instance = parseMigToken(token);
      if (!instance) return std::move(instance).error();
      allocation.mig.push_back(std::move(*instance));
      continue;
    }
    if (token.rfind(kReplicasToken, 0) == 0) {
      // One count per pod, at least 1: a second one, or 0, is not what formatGpuAnnotation writes.
      int replicas = 0;
      if (allocation.replicas > 0 || !parseIndex(token.substr(kReplicasToken.size()), replicas) ||
          replicas == 0) {
        return badToken(token);
      }
      allocation.replicas = replicas;
      continue;
    }
    int gpu = 0;
    if (!parseIndex(token, gpu)) return badToken(token);
    allocation.gpus.push_back(gpu);
  }
  std::sort(allocation.gpus.begin(), allocation.gpus.end());
  return allocation;
}

}  // namespace gte::cluster
