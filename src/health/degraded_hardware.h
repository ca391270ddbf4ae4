#pragma once
// Degraded hardware (docs/health.md): a GPU or NVLink the node agent marks degraded still works,
// but is the likeliest part of the node to fail next. Under the policy's `health` keys a set of
// two or more GPUs that holds such a pair is ranked as if the pair ran over its PCIe path (what
// NCCL falls back to when the link drops), so multi-GPU pods go to an equal healthy set wherever
// one exists; single-GPU pods are not affected, and min-link still counts the pair's NVLink (a
// warning is not a failure: a pod that can only run on that set is not refused). Pure.
#include <array>

#include "policy/link_class.h"
#include "policy/policy.h"
#include "topology/gpu_topology.h"
#include "topology/pair_table.h"

namespace gte {

// Per GPU, the GPUs its pair with is avoided; the GPUs that have any such pair; and the GPUs
// marked degraded themselves (what a 1-GPU member of a group avoids: a link of its GPU failing does
// not stop it, the GPU failing does).
struct AvoidedPairs {
  GpuMask gpus = 0;  // first: a healthy node's check reads this word alone
  GpuMask degraded = 0;
  std::array<GpuMask, kMaxGpus> peers{};

  // The set holds nothing the health policy avoids: for one GPU, not a degraded GPU.
  bool healthy(GpuMask set) const noexcept {
    return gpuCountOf(set) == 1 ? (set & degraded) == 0 : !holds(set);
  }

  bool holds(GpuMask set) const noexcept {
    for (GpuMask rest = set & gpus; rest != 0; rest &= rest - 1) {
      if ((peers[static_cast<std::size_t>(std::countr_zero(rest))] & set) != 0) return true;
    }
    return false;
  }
};

// The pairs the policy ranks below their class: a pair whose `nvlh` mark is degraded or down
// (health.degradedLinks: avoid), or one GPU of which is degraded (health.degradedGpus: avoid; a
// refused GPU is never in a set), pairs only where the links are known. `degraded`: the GPUs
// marked degraded (NodeState::gpuHealth: the labels, and DRA device taints of effect None).
AvoidedPairs avoidedPairs(const GpuTopology& topology, const HealthPolicy& policy,
                          GpuMask degraded);

// The class the set is scored as: `weakest` when it holds no avoided pair, else the weakest over
// its pairs with each avoided pair counted at its PCIe level.
LinkClass scoredWeakest(const AvoidedPairs& avoided, const GpuTopology& topology, GpuMask set,
                        LinkClass weakest);

// Whether a GPU the node agent marks degraded may be allocated at all.
inline bool degradedGpuUsable(const HealthPolicy& policy) noexcept {
  return policy.degradedGpus == DegradedGpus::kAvoid;
}

}  // namespace gte
