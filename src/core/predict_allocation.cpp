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
  if (demand.gpus > 0) {
    const GpuPick* pick = wholeGpuPick(demand, state);
    if (pick == nullptr) {
      allocation.complete = false;
    } else if (state.sharesGpus) {
      // Replicas of shared GPUs (docs/sharing.md): the device plugin places them by tenants per
      // GPU, not on this pick, and they take no whole GPU: nothing to reserve, charge or show.
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
