#pragma once
// The scheduler policy: everything about ranking and fitting that an operator may tune. Immutable
// once built and shared as std::shared_ptr<const Policy>; a reload builds a new one.
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/group_levels.h"
#include "policy/link_class.h"
#include "policy/mig_product.h"

namespace gte {

// Points per GPU pair when ranking sets (higher is better). A pair scores nvlinkPerLink per NVLink
// plus the score of its PCIe level, as NVIDIA's go-gpuallocator does, but with NVLinks through
// NVSwitch counted (they are real bandwidth even though upstream cannot see them).
struct LinkScores {
  int nvlinkPerLink = 100;
  // Indexed by PcieLevel: unknown, sys, node, phb, pxb, pix, sameBoard.
  std::array<int, kPcieLevelCount> pcie = {0, 10, 20, 30, 40, 50, 60};

  int pcieScore(PcieLevel level) const noexcept { return pcie[static_cast<std::size_t>(level)]; }
  friend bool operator==(const LinkScores&, const LinkScores&) = default;
};

// Relative weights of the prioritize terms (docs/scoring.md). Only the terms that apply to a pod
// count: whole-GPU pods use linkQuality, numaLocality and packing; MIG pods use migFit and packing.
struct ScoringWeights {
  int linkQuality = 60;
  int numaLocality = 10;
  int packing = 30;
  int migFit = 70;
  friend bool operator==(const ScoringWeights&, const ScoringWeights&) = default;
};

enum class Strategy : std::uint8_t {
  kBinpack,  // fill nodes up, keep whole nodes and NVLink groups free for big pods
  kSpread,   // prefer emptier nodes
};
std::string_view strategyName(Strategy strategy) noexcept;
std::optional<Strategy> strategyFromName(std::string_view name) noexcept;

// Whether a pod may take replicas of GPUs the device plugin shares among pods (time-slicing, MPS;
// docs/sharing.md).
enum class Isolation : std::uint8_t {
  kShared,     // any GPU, shared or not (what the device plugin gives)
  kExclusive,  // whole GPUs only: nodes whose GPUs are shared refuse the pod
};
std::string_view isolationName(Isolation isolation) noexcept;
std::optional<Isolation> isolationFromName(std::string_view name) noexcept;

// Where pods that take replicas of shared GPUs go among the nodes that share them.
enum class SharedPlacement : std::uint8_t {
  kSpread,  // fewest co-tenants on the GPUs the device plugin will hand out (predictable latency)
  kPack,    // most co-tenants that still leave room (fill shared GPUs before opening new ones)
};
std::string_view sharedPlacementName(SharedPlacement placement) noexcept;
std::optional<SharedPlacement> sharedPlacementFromName(std::string_view name) noexcept;

// Shared GPUs (docs/sharing.md).
struct SharingPolicy {
  // The isolation of pods without a `<prefix>isolation` annotation.
  Isolation defaultIsolation = Isolation::kShared;
  SharedPlacement placement = SharedPlacement::kSpread;
  friend bool operator==(const SharingPolicy&, const SharingPolicy&) = default;
};

// Scarce sets (docs/scoring.md): what breaking a free all-NVLink set bigger than the pod costs a
// node's 0..100 score when its node is the cluster's last holding a set of that size (a tenth of
// it for the tenth). The wire scale ranks the best link class first whatever it costs; below
// one link class (10 points with the default weights) it also keeps a better link ahead under
// wireScale.linkFirst: false unless packing differs too. 0: off.
struct ScarceSetsPolicy {
  int points = 8;
  friend bool operator==(const ScarceSetsPolicy&, const ScarceSetsPolicy&) = default;
};

// What a GPU or NVLink the node agent marks degraded (labels-v1 `health` `d`, `nvlh` `d` or `0`)
// does to placement (docs/health.md).
enum class DegradedGpus : std::uint8_t {
  kAvoid,   // allocatable; sets of two or more GPUs holding one are scored as their PCIe class
  kRefuse,  // never allocated, as a failed GPU
};
enum class DegradedLinks : std::uint8_t {
  kAvoid,   // a degraded pair is scored as its PCIe class (min-link still counts its NVLink)
  kIgnore,  // scored as healthy
};
std::string_view degradedGpusName(DegradedGpus mode) noexcept;
std::optional<DegradedGpus> degradedGpusFromName(std::string_view name) noexcept;
std::string_view degradedLinksName(DegradedLinks mode) noexcept;
std::optional<DegradedLinks> degradedLinksFromName(std::string_view name) noexcept;

struct HealthPolicy {
  DegradedGpus degradedGpus = DegradedGpus::kAvoid;
  DegradedLinks degradedLinks = DegradedLinks::kAvoid;
  friend bool operator==(const HealthPolicy&, const HealthPolicy&) = default;
};

// Build one with defaultPolicy() or parsePolicyYaml(): a value-initialised Policy has an empty
// MIG product table.
struct Policy {
  std::string labelPrefix = "gputopo.dev/";
  LinkScores linkScores;
  ScoringWeights weights;
  Strategy defaultStrategy = Strategy::kBinpack;
  // Multi-GPU pods without min-link or NUMA demands may land on nodes whose links are unknown (no
  // labels-v1, or malformed ones). 1-GPU pods always may; pods with such demands never may.
  bool allowMultiGpuOnUnknownTopology = true;
  // Prioritize puts the best link class among a request's candidates first on the wire (weaker
  // classes 0, at least two steps below); false: one min-max over all candidates' scores, so the
  // weights trade link quality against packing.
  bool linkFirst = true;
  // A MIG request may be met by creating an instance in unpartitioned slices (a MIG manager on the
  // node must then realise it), not only by a free existing instance.
  bool dynamicMig = false;
  std::vector<MigProduct> migProducts;
  // Pod groups: hold time of planned capacity and the topology levels (docs/groups.md).
  GroupsPolicy groups;
  SharingPolicy sharing;
  ScarceSetsPolicy scarceSets;
  HealthPolicy health;

  friend bool operator==(const Policy&, const Policy&) = default;
};

using PolicyConstSharedPtr = std::shared_ptr<const Policy>;

}  // namespace gte
