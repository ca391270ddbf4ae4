#include "core/predict_allocation.h"

#include "core/mig_plan.h"

namespace gte {

const GpuPick* wholeGpuPick(const PodDemand& demand, const NodeState& state) noexcept {
  if (demand.gpus <= 0 || demand.gpus > state.freeCount) {
    return nullptr;
  }
  const auto k = static_cast<std::size_t>(demand.gpus);
  const GpuPick& pick = demand.singleNuma             ? state.whole[k].numaAligned
                        : k < NodeState::kInlinePicks ? state.devicePluginPicks[k]
                                                      : state.whole[k].devicePlugin;
  return pick.gpus == 0 ? nullptr : &pick;
}

SetQuality setQualityOf(const PodDemand& demand, const NodeState& state) noexcept {
  // Replicas of shared GPUs: the set they land on is not known (docs/sharing.md).
  if (state.sharesGpus) return {};
  const GpuPick* pick = demand.gpus >= 2 ? wholeGpuPick(demand, state) : nullptr;
  return pick == nullptr
             ? SetQuality{}
             : SetQuality{pick->weakest, pick->bandwidthGBps, state.avoided.holds(pick->gpus)};
}

Allocation predictAllocation(const PodDemand& demand, const NodeState& state) {
  Allocation allocation;
  allocation.complete = true;
  if (demand.gpus > 0 && state.sharesGpus) {
    // Replicas of shared GPUs (docs/sharing.md): the device plugin lays them by tenants per GPU
    // when the pod starts and they take no whole GPU: what is reserved and charged is their
    // number, which the node's state adds to its tenants.
    allocation.complete = state.replicasFree(demand.gpus);
    allocation.replicas = static_cast<int>(demand.gpus);
  } else if (demand.gpus > 0) {
    const GpuPick* pick = wholeGpuPick(demand, state);
    if (pick == nullptr) {
      allocation.complete = false;
    } else {
      for (GpuMask rest = pick->gpus; rest != 0; rest &= rest - 1) {
        allocation.gpus.push_back(std::countr_zero(rest));
      }
    }
  }
  if (!demand.mig.empty()) {
    MigPlan plan = planMig(demand.mig, state, true);
    allocation.complete = allocation.complete && plan.fits;
    allocation.mig = std::move(plan.assignments);
  }
  return allocation;
}

}  // namespace gte
