#pragma once
// The per-node decision for a pod with DRA claims (docs/dra.md): the device set the scheduler's
// allocator will pick on the node (the first-fit replica over the node's precomputed device order),
// mapped to GPUs and judged like a device-plugin pick: fit (min-link, single NUMA, the policy on
// unknown topology) and the same score terms (link class, NUMA, packing; MIG devices by fullness).
// A node whose allocation the replica cannot tell (an uninterpretable pod or device, an allocator
// error, a node built from other DeviceClasses) fits with no score terms: no claim either way.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/fit_outcome.h"
#include "core/node_state.h"
#include "core/pod_demand.h"
#include "core/score_node.h"
#include "dra/first_fit.h"
#include "policy/policy.h"

namespace gte {

enum class DraOutcome : std::uint8_t {
  kPlaced,       // the allocator allocates: `pick` is what the pod gets
  kNoFit,        // no allocation from the free devices
  kPassThrough,  // no verdict: `why`
};

struct DraPlacement {
  DraOutcome outcome = DraOutcome::kPassThrough;
  GpuPick pick;                // the whole GPUs the allocated devices are
  int wholeGpus = 0;           // whole-GPU devices allocated (mapped or not)
  bool linksUnknown = false;   // some allocated GPU is unmapped, or the node's links are unknown
  int migDevices = 0;          // MIG devices allocated
  std::string why;             // kPassThrough: the reason
  dra::FirstFitResult result;  // positions in the node's DRA device order (explain)
};

// One request's DRA decisions; keeps the first-fit scratch between nodes, so it is used by one
// thread (a request's loop) at a time.
class DraDecider {
 public:
  explicit DraDecider(const DraDemand& demand);

  // `emptied`: as if no claim held a device on the node (could preemption make room).
  // `devices`, when set, stands for the node's DRA devices (the same devices, others in use: the
  // group planner's members placed one after another, group/group_slots.h).
  DraPlacement place(const NodeState& state, bool emptied = false,
                     const dra::NodeDevices* devices = nullptr);
  FitOutcome fit(const PodDemand& demand, const NodeState& state, const Policy& policy);
  // fit's verdict on a placement `place` made on this node.
  FitOutcome judge(const DraPlacement& placed, const PodDemand& demand, const NodeState& state,
                   const Policy& policy);
  ScoreTerms terms(const PodDemand& demand, const NodeState& state);

 private:
  bool fitsWhenEmptied(const PodDemand& demand, const NodeState& state, bool weighLinks);

  const DraDemand& demand_;
  dra::FirstFit claimsOnly_;    // the pod's claims
  dra::FirstFit withExtended_;  // ... and the extended-resource claim (DRA nodes)
};

// The facts of taking whole GPUs `gpus` on the node, from its DRA-side tables (request time).
GpuPick describeDraSet(const NodeState& state, GpuMask gpus);

}  // namespace gte
