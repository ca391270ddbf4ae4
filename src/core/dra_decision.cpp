#include "core/dra_decision.h"

#include <algorithm>

#include "dra_placement/dra_node_state.h"
#include "topology/nvlink_clique.h"
#include "topology/pair_table.h"

namespace gte {
namespace {

std::vector<const dra::ClaimProgram*> programs(const DraDemand& demand, bool withExtended) {
  std::vector<const dra::ClaimProgram*> out;
  for (const dra::ClaimProgram& claim : demand.claims)
    out.push_back(&claim);
  if (withExtended && demand.extendedClass >= 0) out.push_back(&demand.extendedClaim);
  return out;
}

FitOutcome reject(Verdict verdict, FitReason reason) {
  return FitOutcome{verdict, reason, -1};
}

Verdict unlessEmptyFits(bool fitsWhenEmpty) {
  return fitsWhenEmpty ? Verdict::kUnschedulable : Verdict::kUnresolvable;
}

// The NVLink-connected groups of `members` (a walk over neighbour masks).
int largestDomain(const std::array<GpuMask, kMaxGpus>& neighbours, GpuMask members) {
  int largest = 0;
  GpuMask rest = members;
  while (rest != 0) {
    GpuMask domain = rest & (~rest + 1);
    GpuMask frontier = domain;
    while (frontier != 0) {
      const int gpu = std::countr_zero(frontier);
      frontier &= frontier - 1;
      const GpuMask next = neighbours[static_cast<std::size_t>(gpu)] & members & ~domain;
      domain |= next;
      frontier |= next;
    }
    largest = std::max(largest, gpuCountOf(domain));
    rest &= ~domain;
  }
  return largest;
}

}  // namespace

GpuPick describeDraSet(const NodeState& state, GpuMask gpus) {
  GpuPick pick;
  pick.gpus = gpus;
  const GpuTopology& topology = state.topology;
  const int k = gpuCountOf(gpus);
  // A failed mapping numbers DRA GPUs by their order: the labels' facts do not apply to them.
  const bool unmapped = state.dra && state.dra->topologyUnknown;
  if (k <= 1) {
    pick.weakest = LinkClass::kNvlink;
  } else if (!state.linksKnown() || unmapped) {
    pick.weakest = LinkClass::kUnknown;
  } else {
    pick.weakest = LinkClass::kNvlink;
    for (GpuMask a = gpus; a != 0; a &= a - 1) {
      for (GpuMask b = a & (a - 1); b != 0; b &= b - 1) {
        pick.weakest =
            std::min(pick.weakest, topology.linkClass(std::countr_zero(a), std::countr_zero(b)));
      }
    }
  }
  int numa = -2;
  pick.singleNuma = state.status == TopologyStatus::kKnown && gpus != 0 && !unmapped;
  for (GpuMask a = gpus; a != 0 && pick.singleNuma; a &= a - 1) {
    const auto gpu = static_cast<std::size_t>(std::countr_zero(a));
    const int here = gpu < topology.numa.size() ? topology.numa[gpu] : -1;
    pick.singleNuma = here >= 0 && (numa == -2 || numa == here);
    numa = here;
  }
  const GpuMask free = state.freeMask;
  const GpuMask left = free & ~gpus;
  for (GpuMask rest = left; rest != 0; rest &= rest - 1) {
    const GpuMask peers = state.nvlinkNeighbours[static_cast<std::size_t>(std::countr_zero(rest))];
    if ((peers & free) != 0 && (peers & left) == 0) ++pick.stranded;
  }
  pick.largestNvlinkDomainAfter = largestDomain(state.nvlinkNeighbours, left);
  pick.largestNvlinkCliqueAfter = largestNvlinkClique(state.nvlinkNeighbours, left);
  return pick;
}

DraDecider::DraDecider(const DraDemand& demand)
    : demand_(demand),
      claimsOnly_(programs(demand, false)),
      withExtended_(programs(demand, true)) {}

DraPlacement DraDecider::place(const NodeState& state, bool emptied,
                               const dra::NodeDevices* devices) {
  DraPlacement out;
  if (!state.dra) {
    // No slice serves the node: the allocator finds no device for the claims.
    out.outcome = DraOutcome::kNoFit;
    return out;
  }
  const DraNodeState& dra = *state.dra;
  if (dra.catalog != demand_.catalog) {
    out.why = "the node's DRA state was built from other DeviceClasses";
    return out;
  }
  const bool extended = state.allocator == GpuAllocator::kDra && demand_.extendedClass >= 0;
  dra::FirstFit& fit = extended ? withExtended_ : claimsOnly_;
  out.result = fit.run(devices != nullptr ? *devices : dra.devices, dra.classMatches, emptied);
  switch (out.result.status) {
    case dra::FirstFitStatus::kAllocated:
      break;
    case dra::FirstFitStatus::kNoFit:
      out.outcome = DraOutcome::kNoFit;
      return out;
    case dra::FirstFitStatus::kError:
    case dra::FirstFitStatus::kUninterpretable:
      out.why = std::string(dra::firstFitStatusName(out.result.status)) + ": " + out.result.why;
      return out;
  }
  out.outcome = DraOutcome::kPlaced;
  GpuMask gpus = 0;
  for (const dra::PickedDevice& picked : out.result.devices) {
    const dra::DeviceRole role = dra.deviceGpus[picked.position].role;
    const int gpu = dra.deviceGpus[picked.position].gpu;
    if (role == dra::DeviceRole::kMig) {
      ++out.migDevices;
    } else if (role == dra::DeviceRole::kWholeGpu) {
      ++out.wholeGpus;
      if (gpu >= 0) {
        gpus |= bitOf(gpu);
      } else {
        out.linksUnknown = true;
      }
    }
  }
  out.pick = describeDraSet(state, gpus);
  if (out.linksUnknown && out.wholeGpus > 1) out.pick.weakest = LinkClass::kUnknown;
  out.linksUnknown = out.linksUnknown || !state.linksKnown() || dra.topologyUnknown;
  return out;
}

// Would the allocator's pick on the emptied node meet the pod's link and NUMA demands? Then
// preemption may help (kUnschedulable), else nothing will (kUnresolvable).
// Short of free devices, the link demand is not weighed (as checkFit does for too few free GPUs).
bool DraDecider::fitsWhenEmptied(const PodDemand& demand, const NodeState& state, bool weighLinks) {
  const DraPlacement empty = place(state, true);
  return empty.outcome == DraOutcome::kPlaced &&
         (!weighLinks || !demand.minLink || empty.wholeGpus <= 1 ||
          empty.pick.weakest >= *demand.minLink) &&
         (!demand.singleNuma || empty.wholeGpus == 0 || empty.pick.singleNuma);
}

FitOutcome DraDecider::fit(const PodDemand& demand, const NodeState& state, const Policy& policy) {
  return judge(place(state), demand, state, policy);
}

FitOutcome DraDecider::judge(const DraPlacement& placed, const PodDemand& demand,
                             const NodeState& state, const Policy& policy) {
  if (placed.outcome == DraOutcome::kPassThrough) return FitOutcome{};
  if (placed.outcome == DraOutcome::kNoFit) {
    return reject(unlessEmptyFits(fitsWhenEmptied(demand, state, false)),
                  FitReason::kDraNoAllocation);
  }
  const int k = placed.wholeGpus;
  if (k > 1 && placed.linksUnknown) {
    const auto unknown = [&](FitReason reason) {
      return reject(Verdict::kUnresolvable, state.status == TopologyStatus::kMalformed
                                                ? FitReason::kTopologyMalformed
                                                : reason);
    };
    if (demand.minLink) return unknown(FitReason::kTopologyUnknownMinLink);
    if (!policy.allowMultiGpuOnUnknownTopology) return unknown(FitReason::kTopologyUnknownMultiGpu);
  }
  if (demand.singleNuma && k > 0 && (state.numaUnknownGpus & placed.pick.gpus) != 0) {
    return reject(Verdict::kUnresolvable, FitReason::kTopologyUnknownNuma);
  }
  const bool weak = demand.minLink && k > 1 && placed.pick.weakest < *demand.minLink;
  const bool spread = demand.singleNuma && k > 0 && !placed.pick.singleNuma;
  if (!weak && !spread) return FitOutcome{};
  return reject(unlessEmptyFits(fitsWhenEmptied(demand, state, true)),
                weak ? FitReason::kLinkTooWeak : FitReason::kNoSingleNumaSet);
}

ScoreTerms DraDecider::terms(const PodDemand& demand, const NodeState& state) {
  const DraPlacement placed = place(state);
  ScoreTerms terms;
  if (placed.outcome != DraOutcome::kPlaced) return terms;
  // A single-NUMA pod whose set spans NUMA nodes has no placement here (as a device-plugin node
  // without an aligned pick).
  if (demand.singleNuma && placed.wholeGpus > 0 && !placed.pick.singleNuma) return terms;
  if (placed.wholeGpus > 0) wholeGpuTerms(demand, placed.wholeGpus, placed.pick, state, terms);
  if (placed.migDevices > 0) {
    terms.migFit = termValue(kTermScale);  // existing MIG devices: no placement value lost
    if (placed.wholeGpus == 0) {
      terms.packing = termValue(migDevicePackingTerm(demand, state.dra->migDevicesInUse,
                                                     placed.migDevices, state.dra->migDevices));
    }
  }
  return terms;
}

}  // namespace gte
