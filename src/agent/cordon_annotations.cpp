#include "agent/cordon_annotations.h"

#include <algorithm>
#include <charconv>

namespace gte::agent {
namespace {

std::string trim(const std::string& text) {
  const auto begin = text.find_first_not_of(" \t");
  if (begin == std::string::npos) {
    return "";
  }
  return text.substr(begin, text.find_last_not_of(" \t") - begin + 1);
}

std::vector<std::string> entries(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    out.push_back(trim(text.substr(start, comma - start)));
    start = comma + 1;
  }
  return out;
}

bool gpuIndex(const std::string& text, int gpuCount, int& out) {
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && ptr == text.data() + text.size() && out >= 0 &&
         out < gpuCount;
}

}  // namespace

Cordons parseCordons(const StringMap& annotations, const std::string& prefix, int gpuCount) {
  Cordons out;
  const std::string gpusKey = prefix + "cordoned-gpus";
  const std::string linksKey = prefix + "cordoned-links";
  const auto bad = [&](const std::string& key, const std::string& entry, const char* want) {
    out.errors.push_back(key + ": '" + entry + "' is not " + want + " (GPUs 0.." +
                         std::to_string(gpuCount - 1) + ")");
  };
  if (const auto it = annotations.find(gpusKey);
      it != annotations.end() && !trim(it->second).empty()) {
    for (const std::string& entry : entries(it->second)) {
      int gpu = 0;
      if (!gpuIndex(entry, gpuCount, gpu)) {
        bad(gpusKey, entry, "a GPU index");
        continue;
      }
      if (std::find(out.gpus.begin(), out.gpus.end(), gpu) == out.gpus.end()) {
        out.gpus.push_back(gpu);
      }
    }
  }
  if (const auto it = annotations.find(linksKey);
      it != annotations.end() && !trim(it->second).empty()) {
    for (const std::string& entry : entries(it->second)) {
      const std::size_t dash = entry.find('-');
      int a = 0, b = 0;
      if (dash == std::string::npos || !gpuIndex(trim(entry.substr(0, dash)), gpuCount, a) ||
          !gpuIndex(trim(entry.substr(dash + 1)), gpuCount, b) || a == b) {
        bad(linksKey, entry, "a pair I-J of two different GPU indices");
        continue;
      }
      const std::pair<int, int> pair{std::min(a, b), std::max(a, b)};
      if (std::find(out.links.begin(), out.links.end(), pair) == out.links.end()) {
        out.links.push_back(pair);
      }
    }
  }
  return out;
}

void applyCordons(const Cordons& cordons, GpuTopology& topology) {
  const int n = topology.gpuCount;
  for (const int gpu : cordons.gpus) {
    if (gpu >= 0 && gpu < n && static_cast<std::size_t>(gpu) < topology.health.size()) {
      topology.health[static_cast<std::size_t>(gpu)] = GpuHealth::kCordoned;
    }
  }
  if (cordons.links.empty() || n < 2) {
    return;
  }
  const auto pairs = static_cast<std::size_t>(pairCount(n));
  if (topology.linkHealth.size() != pairs) {
    topology.linkHealth.assign(pairs, LinkHealth::kOk);
  }
  for (const auto& [a, b] : cordons.links) {
    if (a >= 0 && b < n && a < b) {
      topology.linkHealth[static_cast<std::size_t>(pairIndex(a, b, n))] = LinkHealth::kCordoned;
    }
  }
}

}  // namespace gte::agent
