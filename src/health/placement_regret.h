#pragma once
// Placement regret (docs/topology-health.md, "Placement regret"): how much worse linked the GPUs a
// pod got are than the best set any node offered a pod of its size when it was decided, and
// whose choice that was. prioritize records what it saw for the pod (PlacementOffer, plus the
// cluster-wide best from the snapshot's health totals); when the pod is seen bound, the set it
// got is compared with it. Pure.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/set_quality.h"
#include "topology/gpu_topology.h"

namespace gte {

enum class RegretReason : std::uint8_t {
  kNone,  // the pod got the best set offered
  // No candidate kube-scheduler sent the extender offered better: the pod's own constraints
  // (node selector, affinity, taints) or the free GPUs of the nodes it could use.
  kNoBetterFit,
  // A candidate offered better, but the extender itself ranked a node no better than the chosen
  // one at the top: its weights traded link quality for packing (within a link class, or across
  // classes with wireScale.linkFirst: false).
  kPolicyTradeoff,
  // Every node the extender ranked top offered better: kube-scheduler's other scores chose this
  // node.
  kSchedulerOverride,
  // A candidate offered better, but only on a GPU or NVLink marked degraded, which the health
  // policy ranks below its class (docs/health.md): the extender avoided it.
  kAvoidedDegraded,
};
std::string_view regretReasonName(RegretReason reason) noexcept;

// What one prioritize request saw for a pod of k >= 2 whole GPUs: the best set over the
// candidates that fit (the highest bandwidth and, separately, the best weakest class), and the
// worst set over the candidates it ranked top (wire score 10).
struct PlacementOffer {
  std::int64_t gpus = 0;
  SetQuality feasibleBest;
  SetQuality topWorst;
  std::string_view bestNode;  // a candidate offering feasibleBest's bandwidth
  std::string_view topNode;   // the top-ranked candidate with the highest 0..100 score
  // The best over the fitting candidates' sets that hold nothing degraded the policy avoids; it
  // differs from feasibleBest only where some candidate's set was avoided (`avoidedAny`).
  SetQuality healthyBest;
  bool avoidedAny = false;
  bool any() const noexcept { return !bestNode.empty(); }
};

// What is kept per pod until it is bound: the offer, and the best set any node of the cluster
// offered a pod of that size at the same moment (from the snapshot the request decided on).
struct PlacementDecision {
  std::int64_t gpus = 0;
  SetQuality clusterBest;
  SetQuality feasibleBest;
  SetQuality topWorst;
  std::string bestNode;
  std::string topNode;
  SetQuality healthyBest;
  bool avoidedAny = false;
};

// A pod seen bound to a node: the GPUs it holds there and how well they are linked.
struct PodPlacement {
  std::string uid;
  std::string ns;
  std::string name;
  std::string node;
  std::int64_t gpus = 0;     // whole GPUs requested
  std::vector<int> indices;  // the GPUs it holds; empty when they are not known
  SetQuality got;            // unknown when the indices or the node's links are
};

struct PlacementRegret {
  // Both bandwidths known: `ratio` means something.
  bool measured = false;
  // 1 - got / best bandwidth, clamped to [0, 1]: 0 the best any node offered, 1 nothing.
  double ratio = 0;
  RegretReason reason = RegretReason::kNone;       // why the bandwidth is below the best
  bool belowBestClass = false;                     // got a weaker link class than any node offered
  RegretReason classReason = RegretReason::kNone;  // why the class is below the best
};

PlacementRegret placementRegret(const PlacementDecision& decision, const SetQuality& got);

// How well linked the GPUs `indices` of a node are; unknown for fewer than two GPUs, an index the
// node does not have, or unknown links.
SetQuality heldSetQuality(const GpuTopology& topology, const std::vector<int>& indices);

}  // namespace gte
