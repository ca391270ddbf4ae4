#include <string>

#include "core/fit_outcome.h"

namespace gte {
namespace {

std::string linkFloorName(LinkClass cls) {
  switch (cls) {
    case LinkClass::kNvlink:
      return "NVLink";
    case LinkClass::kPix:
      return "PIX";
    case LinkClass::kPxb:
      return "PXB";
    case LinkClass::kPhb:
      return "PHB";
    case LinkClass::kNode:
      return "NODE";
    default:
      return "SYS";
  }
}

std::string migProfile(const FitOutcome& outcome, const PodDemand& demand) {
  if (outcome.migRequest < 0 || outcome.migRequest >= static_cast<int>(demand.mig.size())) {
    return "?";
  }
  return demand.mig[static_cast<std::size_t>(outcome.migRequest)].profile;
}

// "shared by time-slicing, 4 replicas per GPU" (`per` "each" for MIG devices).
std::string sharedHow(const FitOutcome& outcome, std::string_view per = "per GPU") {
  std::string how = outcome.sharing == SharingStrategy::kUnknown
                        ? std::string("shared (sharing unreadable or unnamed)")
                        : "shared by " + std::string(sharingStrategyName(outcome.sharing));
  if (outcome.replicas > 0) {
    how += ", " + std::to_string(outcome.replicas) + " replicas " + std::string(per);
  }
  return how;
}

// The node's GPUs as a replicas-on reason names them: whole, or how they are shared.
std::string gpusHow(const FitOutcome& outcome) {
  return outcome.sharing == SharingStrategy::kNone ? std::string("whole GPUs")
                                                   : "GPUs " + sharedHow(outcome);
}

}  // namespace

std::string fitReasonText(const FitOutcome& outcome, const PodDemand& demand) {
  const std::string k = std::to_string(demand.gpus);
  switch (outcome.reason) {
    case FitReason::kNone:
      return "";
    case FitReason::kNoGpus:
      return "node has no usable GPUs";
    case FitReason::kTooFewGpus:
      return "node has fewer than " + k + " usable GPUs";
    case FitReason::kInsufficientFreeGpus:
      return "insufficient free GPUs";
    case FitReason::kLinkTooWeak:
      if (demand.minLink == LinkClass::kNvlink) {
        return "no " + k + " NVLink-connected free GPUs";
      }
      return "no " + k + " free GPUs linked by " +
             linkFloorName(demand.minLink.value_or(LinkClass::kSys)) + " or better";
    case FitReason::kNoSingleNumaSet:
      return "no single-NUMA set of " + k + " free GPUs";
    case FitReason::kTopologyMalformed:
      return "topology labels malformed";
    case FitReason::kTopologyUnknownMinLink:
      return "topology unknown and pod requires min-link";
    case FitReason::kTopologyUnknownNuma:
      return "topology unknown and pod requires a single NUMA node";
    case FitReason::kTopologyUnknownMultiGpu:
      return "topology unknown and policy keeps multi-GPU pods off such nodes";
    case FitReason::kMigUnsupportedModel:
      return "GPU model has no MIG product table entry";
    case FitReason::kMigProfileUnknown:
      return "MIG profile " + migProfile(outcome, demand) + " is not offered by this GPU model";
    case FitReason::kMigNoPlacement:
      return "MIG profile " + migProfile(outcome, demand) + " has no free placement";
    case FitReason::kGpusShared:
      return "GPUs " + sharedHow(outcome) + "; the pod asks for exclusive GPUs";
    case FitReason::kMigShared:
      return "MIG " + migProfile(outcome, demand) + " devices " + sharedHow(outcome, "each") +
             "; the pod asks for exclusive GPUs";
    case FitReason::kGpusSharedSetUnknown:
      return "GPUs " + sharedHow(outcome) +
             ": the device plugin places replicas without regard to links or NUMA; the pod "
             "requires " +
             (demand.singleNuma ? std::string("a single NUMA node") : std::string("min-link"));
    case FitReason::kOneReplicaPerContainer:
      return "GPUs " + sharedHow(outcome) +
             ": the device plugin admits one replica per container " +
             (outcome.sharing == SharingStrategy::kMps
                  ? std::string("under MPS")
                  : std::string("(failRequestsGreaterThanOne)")) +
             "; a container of the pod asks for " + std::to_string(demand.containerGpus());
    case FitReason::kReplicasNotDistinct:
      return gpusHow(outcome) + ": the device plugin may put two of the pod's " + k +
             " replicas on one GPU, or on GPUs without NVLink between them; the pod asks for "
             "distinct NVLink-connected GPUs";
    case FitReason::kReplicasNotSame:
      return gpusHow(outcome) + ": the pod's " + k +
             " replicas would not all land on one GPU; the pod asks for "
             "one GPU";
    case FitReason::kInsufficientFreeReplicas:
      return demand.gpus == 1 ? std::string("no free replica of the node's shared GPUs")
                              : "fewer than " + k + " free replicas of the node's shared GPUs";
    case FitReason::kNoSharedResource:
      return "node does not advertise nvidia.com/gpu.shared";
    case FitReason::kGpusRenamedShared:
      return "node advertises its GPUs as nvidia.com/gpu.shared (replicas of shared GPUs); the "
             "pod asks for nvidia.com/gpu";
    case FitReason::kDraNoAllocation:
      return "the pod's DRA claims cannot be allocated from the node's free devices";
  }
  return "unknown reason";
}

}  // namespace gte
