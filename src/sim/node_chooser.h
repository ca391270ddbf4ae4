#pragma once
// How a scheduler picks one node among the feasible ones: the extender as kube-scheduler really
// combines it (extender wire score x weight x 10 added to the in-tree scores), and the baselines.
// Every chooser breaks ties uniformly at random (seeded), as kube-scheduler's selectHost does.
#include <cstdint>
#include <optional>
#include <string_view>

namespace gte::sim {

enum class Chooser : std::uint8_t {
  kExtender,          // filter = checkFit, score = in-tree + prioritizeNodes wire x w x 10
  kLeastAllocated,    // stock kube-scheduler: GPU-blind LeastAllocated on cpu and memory
  kMostAllocatedGpu,  // NodeResourcesFit MostAllocated over cpu, memory and nvidia.com/gpu
  kBestFit,           // fewest free GPUs left, then least free CPU (FGD's BestFit)
  kRandom,            // any feasible node
};
std::string_view chooserName(Chooser chooser) noexcept;
std::optional<Chooser> chooserFromName(std::string_view name) noexcept;

// The in-tree NodeResourcesFit strategy kube-scheduler runs next to the extender.
enum class InTree : std::uint8_t {
  kNone,            // extender score only
  kLeastAllocated,  // the default profile: LeastAllocated over cpu and memory
  kMostAllocated,   // MostAllocated over cpu, memory and nvidia.com/gpu
};
std::string_view inTreeName(InTree inTree) noexcept;
std::optional<InTree> inTreeFromName(std::string_view name) noexcept;

// What the in-tree score plugins see of a node: capacity and what is requested on it, the pod's
// request included (kube-scheduler scores the node as it would be after placement).
struct NodeLoad {
  std::int64_t cpuCapacity = 0;
  std::int64_t cpuRequested = 0;
  std::int64_t memoryCapacity = 0;
  std::int64_t memoryRequested = 0;
  std::int64_t gpuCapacity = 0;
  std::int64_t gpuRequested = 0;
};

// NodeResourcesFit (0..100, weight 1) plus NodeResourcesBalancedAllocation over cpu and memory
// (0..100, weight 1), as the default profile runs them; 0 for kNone.
std::int64_t inTreeScore(InTree inTree, const NodeLoad& load);

}  // namespace gte::sim
