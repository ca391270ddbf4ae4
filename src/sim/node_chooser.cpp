#include "sim/node_chooser.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace gte::sim {
namespace {

constexpr std::array<std::pair<Chooser, std::string_view>, 5> kChoosers{{
    {Chooser::kExtender, "extender"},
    {Chooser::kLeastAllocated, "least-allocated"},
    {Chooser::kMostAllocatedGpu, "most-allocated-gpu"},
    {Chooser::kBestFit, "best-fit"},
    {Chooser::kRandom, "random"},
}};

constexpr std::array<std::pair<InTree, std::string_view>, 3> kInTrees{{
    {InTree::kNone, "none"},
    {InTree::kLeastAllocated, "least-allocated"},
    {InTree::kMostAllocated, "most-allocated"},
}};

// kube-scheduler's per-resource scores, integer arithmetic as upstream (0 for no capacity).
std::int64_t leastAllocated(std::int64_t requested, std::int64_t capacity) {
  if (capacity <= 0 || requested > capacity) {
    return 0;
  }
  return (capacity - requested) * 100 / capacity;
}

std::int64_t mostAllocated(std::int64_t requested, std::int64_t capacity) {
  if (capacity <= 0) {
    return 0;
  }
  return (requested > capacity ? capacity : requested) * 100 / capacity;
}

// 100 x (1 - standard deviation of the cpu and memory fractions); for two resources the standard
// deviation is half their difference.
std::int64_t balancedAllocation(const NodeLoad& load) {
  const auto fraction = [](std::int64_t requested, std::int64_t capacity) {
    return capacity <= 0
               ? 0.0
               : std::min(1.0, static_cast<double>(requested) / static_cast<double>(capacity));
  };
  const double cpu = fraction(load.cpuRequested, load.cpuCapacity);
  const double memory = fraction(load.memoryRequested, load.memoryCapacity);
  const double deviation = std::abs(cpu - memory) / 2;
  return static_cast<std::int64_t>((1 - deviation) * 100);
}

}  // namespace

std::string_view chooserName(Chooser chooser) noexcept {
  for (const auto& [value, name] : kChoosers) {
    if (value == chooser) {
      return name;
    }
  }
  return "unknown";
}

std::optional<Chooser> chooserFromName(std::string_view name) noexcept {
  for (const auto& [value, known] : kChoosers) {
    if (known == name) {
      return value;
    }
  }
  return std::nullopt;
}

std::string_view inTreeName(InTree inTree) noexcept {
  for (const auto& [value, name] : kInTrees) {
    if (value == inTree) {
      return name;
    }
  }
  return "unknown";
}

std::optional<InTree> inTreeFromName(std::string_view name) noexcept {
  for (const auto& [value, known] : kInTrees) {
    if (known == name) {
      return value;
    }
  }
  return std::nullopt;
}

std::int64_t inTreeScore(InTree inTree, const NodeLoad& load) {
  switch (inTree) {
    case InTree::kNone:
      return 0;
    case InTree::kLeastAllocated:
      return (leastAllocated(load.cpuRequested, load.cpuCapacity) +
              leastAllocated(load.memoryRequested, load.memoryCapacity)) /
                 2 +
             balancedAllocation(load);
    case InTree::kMostAllocated:
      return (mostAllocated(load.cpuRequested, load.cpuCapacity) +
              mostAllocated(load.memoryRequested, load.memoryCapacity) +
              mostAllocated(load.gpuRequested, load.gpuCapacity)) /
                 3 +
             balancedAllocation(load);
  }
  return 0;
}

}  // namespace gte::sim
