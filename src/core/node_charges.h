#pragma once
// Who holds what on one node, as the cluster cache accounts it: one charge per bound or reserved
// GPU pod, with the devices it holds. The node's usage (what the extender adds on top of the
// labels) is the sum of the counted charges, kept up to date on every put and erase, as
// kube-scheduler's NodeInfo keeps its requested resources on AddPod/RemovePod. Uncounted charges
// are pods the node's labels already show as using their devices; they are kept so preempt's
// what-if can release those devices.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/allocation.h"
#include "core/node_state.h"
#include "core/node_usage.h"
#include "policy/policy.h"

namespace gte {

struct PodCharge {
  std::string uid;
  bool counted = true;            // false: the labels already show its devices as used
  Allocation allocation;          // the GPUs and MIG instances it holds, when they can be named
  std::int64_t unplacedGpus = 0;  // whole GPUs it holds that cannot be named
  friend bool operator==(const PodCharge&, const PodCharge&) = default;
};

class NodeCharges {
 public:
  // Adds the charge, replacing one with the same UID.
  void put(PodCharge charge);
  // No-op for an unknown UID.
  void erase(std::string_view uid);
  const PodCharge* find(std::string_view uid) const noexcept;

  const std::vector<PodCharge>& pods() const noexcept { return pods_; }
  // Sum of the counted charges.
  const NodeUsage& usage() const noexcept { return usage_; }
  bool empty() const noexcept { return pods_.empty(); }
  friend bool operator==(const NodeCharges&, const NodeCharges&) = default;

 private:
  std::vector<PodCharge> pods_;
  NodeUsage usage_;
};

using NodeChargesConstSharedPtr = std::shared_ptr<const NodeCharges>;

// The usage a node that hands GPUs out through DRA (GpuAllocator::kDra) is built with: its
// pod-group holds alone. A pod placed there holds its GPUs through its claims, which the node's
// DRA state counts already; a hold is the extender's own and no claim shows it.
NodeUsage draUsage(const NodeCharges& charges);

// The usage `state` was built with from its charges (chargeNodeState): draUsage on a DRA node,
// every counted charge elsewhere; empty without charges. What a what-if adds its pods to.
NodeUsage chargedUsage(const NodeState& state);

// Preempt's what-if: the node as if the pods with these UIDs were gone. Counted victims leave the
// usage; the devices of uncounted victims (shown as used by the labels) are released. A victim
// whose devices cannot be named frees nothing (preemption is never promised on a guess). Reads
// only `state` (and the charges it was built with): no lock, no label parsing.
NodeStateConstSharedPtr nodeStateWithout(const NodeState& state,
                                         const std::vector<std::string>& podUids,
                                         const Policy& policy);

}  // namespace gte
