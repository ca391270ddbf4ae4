#include "core/node_charges.h"

#include <algorithm>

#include "core/hold_charge.h"
#include "dra_placement/dra_node_state.h"

namespace gte {
namespace {

void removeOne(std::vector<int>& from, int value) {
  const auto it = std::find(from.begin(), from.end(), value);
  if (it != from.end()) from.erase(it);
}

void subtract(NodeUsage& usage, const PodCharge& charge) {
  for (const int gpu : charge.allocation.gpus)
    removeOne(usage.gpus, gpu);
  for (const MigAssignment& instance : charge.allocation.mig) {
    const MigInstanceRef ref{instance.gpu, instance.profile, instance.start};
    const auto it = std::find(usage.mig.begin(), usage.mig.end(), ref);
    if (it != usage.mig.end()) usage.mig.erase(it);
  }
  if (charge.allocation.replicas > 0) removeOne(usage.replicas, charge.allocation.replicas);
  usage.unknownGpus -= charge.unplacedGpus;
}

void add(NodeUsage& usage, const PodCharge& charge) {
  addToUsage(usage, charge.allocation);
  usage.unknownGpus += charge.unplacedGpus;
}

}  // namespace

void NodeCharges::put(PodCharge charge) {
  const auto it = std::find_if(pods_.begin(), pods_.end(),
                               [&](const PodCharge& c) { return c.uid == charge.uid; });
  if (charge.counted) add(usage_, charge);
  if (it == pods_.end()) {
    pods_.push_back(std::move(charge));
    return;
  }
  if (it->counted) subtract(usage_, *it);
  *it = std::move(charge);
}

void NodeCharges::erase(std::string_view uid) {
  const auto it =
      std::find_if(pods_.begin(), pods_.end(), [&](const PodCharge& c) { return c.uid == uid; });
  if (it == pods_.end()) return;
  if (it->counted) subtract(usage_, *it);
  pods_.erase(it);
}

const PodCharge* NodeCharges::find(std::string_view uid) const noexcept {
  const auto it =
      std::find_if(pods_.begin(), pods_.end(), [&](const PodCharge& c) { return c.uid == uid; });
  return it == pods_.end() ? nullptr : &*it;
}

NodeUsage draUsage(const NodeCharges& charges) {
  NodeUsage usage;
  for (const PodCharge& charge : charges.pods()) {
    if (charge.counted && !heldFor(charge.uid).empty()) add(usage, charge);
  }
  return usage;
}

NodeUsage chargedUsage(const NodeState& state) {
  if (!state.charges) return {};
  return state.allocator == GpuAllocator::kDra ? draUsage(*state.charges) : state.charges->usage();
}

NodeStateConstSharedPtr nodeStateWithout(const NodeState& state,
                                         const std::vector<std::string>& podUids,
                                         const Policy& policy) {
  NodeUsage usage;
  NodeUsage released;
  if (state.charges) {
    for (const PodCharge& charge : state.charges->pods()) {
      const bool victim = std::find(podUids.begin(), podUids.end(), charge.uid) != podUids.end();
      if (victim && !charge.counted) {
        addToUsage(released, charge.allocation);
      } else if (!victim && charge.counted &&
                 (state.allocator != GpuAllocator::kDra || !heldFor(charge.uid).empty())) {
        add(usage, charge);
      }
    }
  }
  // DRA nodes: the devices of the victims' claims are freed too; of the charges only the holds
  // count there (draUsage).
  return rebuildNodeState(state, usage, policy, released,
                          draStateWithout(state.publishedDra(), podUids));
}

}  // namespace gte
