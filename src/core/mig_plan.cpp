#include "core/mig_plan.h"

#include <algorithm>

namespace gte {
namespace {

MigPlan failAt(int request, bool unresolvable) {
  MigPlan plan;
  plan.fits = false;
  plan.failedRequest = request;
  plan.unresolvable = unresolvable;
  return plan;
}

// Nodes without labels-v1: MIG devices are known by count only.
MigPlan planByCount(const std::vector<MigRequest>& requests, const NodeState& state) {
  for (std::size_t r = 0; r < requests.size(); ++r) {
    const auto matches = [&](const MigDeviceCount& d) { return d.profile == requests[r].profile; };
    const auto total =
        std::find_if(state.migTotalDevices.begin(), state.migTotalDevices.end(), matches);
    const auto free =
        std::find_if(state.migFreeDevices.begin(), state.migFreeDevices.end(), matches);
    const std::int64_t totalCount = total == state.migTotalDevices.end() ? 0 : total->count;
    const std::int64_t freeCount = free == state.migFreeDevices.end() ? 0 : free->count;
    if (freeCount < requests[r].count) {
      return failAt(static_cast<int>(r), totalCount < requests[r].count);
    }
  }
  return MigPlan{};
}

class GreedyMigPlanner {
 public:
  GreedyMigPlanner(const NodeState& state, const MigProduct& product)
      : state_(state),
        product_(product),
        occupied_(state.migOccupied),
        free_(state.migFreeInstances),
        instances_(state.migInstances) {}

  MigPlan plan(const std::vector<MigRequest>& requests, bool wantAssignments) {
    // Largest first: small instances placed early could block the only start a large one has.
    std::vector<std::size_t> order(requests.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
      order[i] = i;
    }
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const MigProfile* pa = product_.findByName(requests[a].profile);
      const MigProfile* pb = product_.findByName(requests[b].profile);
      return (pa ? pa->slices : 0) > (pb ? pb->slices : 0);
    });
    MigPlan result;
    long qualitySum = 0;
    long placed = 0;
    for (std::size_t r : order) {
      const MigProfile* profile = product_.findByName(requests[r].profile);
      const MigProfileFit* fit = state_.migFit(requests[r].profile);
      if (profile == nullptr || fit == nullptr) {
        return failAt(static_cast<int>(r), true);
      }
      for (std::int64_t c = 0; c < requests[r].count; ++c) {
        const auto assignment = place(*profile);
        if (!assignment) {
          return failAt(static_cast<int>(r), !fit->possibleWhenEmpty);
        }
        qualitySum += assignment->second;
        ++placed;
        result.slicesTaken += profile->slices;
        if (wantAssignments) {
          result.assignments.push_back(assignment->first);
        }
      }
    }
    result.qualityPermille = placed == 0 ? 1000 : static_cast<int>(qualitySum / placed);
    return result;
  }

 private:
  std::optional<std::pair<MigAssignment, int>> place(const MigProfile& profile) {
    // A free existing instance: one replica of it where the device plugin shares the profile.
    if (const auto existing = mostFreeMigInstance(free_, profile.code)) {
      auto& free = free_[static_cast<std::size_t>(existing->first)];
      free.erase(std::find_if(free.begin(), free.end(), [&](const MigInstance& i) {
        return i.profileCode == profile.code && i.start == existing->second;
      }));
      return std::make_pair(MigAssignment{existing->first, profile.name, existing->second, false},
                            1000);
    }
    if (!state_.dynamicMig) {
      return std::nullopt;
    }
    int bestGpu = -1;
    SlicePlacement best;
    int bestLoss = 0;
    for (std::size_t gpu = 0; gpu < occupied_.size(); ++gpu) {
      if (!state_.migUsable[gpu] ||
          instanceCount(instances_[gpu], profile.code) >= profile.maxInstances) {
        continue;
      }
      const auto placement = bestFreePlacement(occupied_[gpu], profile, product_);
      if (!placement) {
        continue;
      }
      const int loss = placementValue(occupied_[gpu], product_) - placement->valueAfter;
      if (bestGpu < 0 || loss < bestLoss) {
        bestGpu = static_cast<int>(gpu);
        best = *placement;
        bestLoss = loss;
      }
    }
    if (bestGpu < 0) {
      return std::nullopt;
    }
    const auto at = static_cast<std::size_t>(bestGpu);
    occupied_[at] = static_cast<SliceMask>(occupied_[at] | sliceMask(best.start, profile.slices));
    instances_[at].push_back({profile.code, best.start, MigInstanceState::kUsed});
    const int emptyValue = placementValue(0, product_);
    const int quality = emptyValue == 0 ? 1000 : 1000 - bestLoss * 1000 / emptyValue;
    return std::make_pair(MigAssignment{bestGpu, profile.name, best.start, true}, quality);
  }

  const NodeState& state_;
  const MigProduct& product_;
  std::vector<SliceMask> occupied_;
  std::vector<std::vector<MigInstance>> free_;
  std::vector<std::vector<MigInstance>> instances_;
};

}  // namespace

MigPlan planMig(const std::vector<MigRequest>& requests, const NodeState& state,
                bool wantAssignments) {
  if (requests.empty()) {
    return MigPlan{};
  }
  if (state.status != TopologyStatus::kKnown) {
    return planByCount(requests, state);
  }
  if (!state.migProduct) {
    return failAt(0, true);
  }
  if (requests.size() == 1 && requests[0].count == 1) {
    // The common case, answered from the fits precomputed when the node changed.
    const MigProfileFit* fit = state.migFit(requests[0].profile);
    if (fit == nullptr) {
      return failAt(0, true);
    }
    if (fit->gpu < 0) {
      return failAt(0, !fit->possibleWhenEmpty);
    }
    MigPlan plan;
    plan.qualityPermille = fit->qualityPermille;
    plan.slicesTaken = state.migProduct->findByName(fit->profile)->slices;
    if (wantAssignments) {
      plan.assignments.push_back({fit->gpu, fit->profile, fit->start, !fit->existing});
    }
    return plan;
  }
  return GreedyMigPlanner(state, *state.migProduct).plan(requests, wantAssignments);
}

}  // namespace gte
