#pragma once
// The verdict of the fit check for one pod on one node, as values. The reason is a
// category, not text, so the request path formats nothing per node; fitReasonText() builds
// the message from the category and the pod's request only, so kube-scheduler can group identical
// messages across nodes.
#include <cstdint>
#include <string>

#include "core/gpu_sharing.h"
#include "core/pod_demand.h"

namespace gte {

enum class Verdict : std::uint8_t {
  kFit,
  kUnschedulable,  // would fit on this node emptied of pods: preemption may help (FailedNodes)
  kUnresolvable,   // cannot fit even then (FailedAndUnresolvableNodes)
};

enum class FitReason : std::uint8_t {
  kNone,
  kNoGpus,                    // the node has no usable whole GPUs at all
  kTooFewGpus,                // fewer usable GPUs than requested
  kInsufficientFreeGpus,      // enough GPUs, not enough free
  kLinkTooWeak,               // the pick's weakest link is below the pod's min-link
  kNoSingleNumaSet,           // no NUMA node has enough free GPUs
  kTopologyMalformed,         // labels-v1 malformed and the pod needs topology facts
  kTopologyUnknownMinLink,    // links unknown and the pod sets min-link
  kTopologyUnknownNuma,       // NUMA unknown and the pod asks for one NUMA node
  kTopologyUnknownMultiGpu,   // links unknown and the policy keeps multi-GPU pods off
  kMigUnsupportedModel,       // the GPU model has no MIG product table entry
  kMigProfileUnknown,         // the product does not offer the requested profile
  kMigNoPlacement,            // no free instance or legal free placement for the profile
  kDraNoAllocation,           // the DRA allocator finds no devices for the pod's claims
  kGpusShared,                // exclusive GPUs asked, the device plugin shares the node's GPUs
  kMigShared,                 // exclusive GPUs asked, the plugin shares a requested MIG profile
  kGpusSharedSetUnknown,      // min-link or one NUMA node asked of replicas the plugin places
  kOneReplicaPerContainer,    // MPS or failRequestsGreaterThanOne: one replica per container
  kReplicasNotDistinct,       // replicas-on: distinct, and two replicas may share a GPU
  kReplicasNotSame,           // replicas-on: same, and the replicas would span GPUs
  kInsufficientFreeReplicas,  // shared GPUs: fewer free replicas than requested
  kNoSharedResource,          // the pod asks nvidia.com/gpu.shared, the node does not advertise it
  kGpusRenamedShared,  // the pod asks nvidia.com/gpu, the node advertises nvidia.com/gpu.shared
};

struct FitOutcome {
  Verdict verdict = Verdict::kFit;
  FitReason reason = FitReason::kNone;
  int migRequest = -1;  // index into PodDemand::mig for MIG reasons
  // kGpusShared, kGpusSharedSetUnknown, kMigShared: how the node shares its GPUs (kMigShared: the
  // requested MIG profile's devices), named in the reason.
  SharingStrategy sharing = SharingStrategy::kNone;
  std::uint16_t replicas = 0;  // 0: not known

  bool fits() const noexcept { return verdict == Verdict::kFit; }
};

// E.g. "no 4 NVLink-connected free GPUs", "MIG profile 3g.40gb has no free placement".
std::string fitReasonText(const FitOutcome& outcome, const PodDemand& demand);

}  // namespace gte
