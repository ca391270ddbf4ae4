#pragma once
// What filter and prioritize answer on one node for the common pod: k whole GPUs (1..8) and
// nothing else, no MIG instance, no min-link or NUMA annotation, either strategy. The snapshot
// builder has them computed once per node state (precomputePlainAnswers, with the same checkFit
// and scoreTerms the request path calls for any other demand); a request over thousands of nodes
// then reads one cache line per node from a table its shard keeps contiguous, instead of several
// lines scattered over each node's state. NodeDecider (core/node_decider.h) chooses between the
// two paths.
#include <array>
#include <cstddef>
#include <cstdint>

#include "core/fit_outcome.h"
#include "core/pod_demand.h"
#include "core/score_node.h"
#include "core/set_quality.h"

namespace gte {

struct NodeState;
struct Policy;

// One request size. Score terms as scoreTerms gives them (0..1200, -1 where one does not apply),
// and the set the device plugin would hand over (what placement regret compares).
struct alignas(16) PlainAnswer {
  Verdict verdict = Verdict::kFit;
  FitReason reason = FitReason::kNone;
  // The set (set() below), its two fields apart so the byte between them holds brokenSets.
  LinkClass setWeakest = LinkClass::kUnknown;
  // ScoreTerms::brokenSets, either strategy, in the low bits; kSetAvoided: SetQuality::avoided.
  std::uint8_t brokenSets = 0;
  std::uint16_t setBandwidthGBps = 0;
  std::int16_t linkQuality = -1;
  std::int16_t numaLocality = -1;
  std::int16_t packingBinpack = -1;  // the packing term under each strategy
  std::int16_t packingSpread = -1;
  // The node's: on a DRA node, the class its plain order is (DraNodeState::plainClass) when
  // claims of that class can be read as whole GPUs there; -1 elsewhere. Kept in every answer (the
  // two bytes the answer has spare), so a claim pod read as N GPUs (core/claims_as_gpus.h) reads
  // this one line per node, as a plain pod does, instead of the node's DRA state.
  std::int16_t draPlainClass = -1;

  static constexpr std::uint8_t kSetAvoided = 0x80;

  FitOutcome fit() const noexcept { return FitOutcome{verdict, reason, -1}; }
  SetQuality set() const noexcept {
    return SetQuality{setWeakest, setBandwidthGBps, (brokenSets & kSetAvoided) != 0};
  }
  // migFit stays -1: a plain demand asks for no MIG instance.
  ScoreTerms terms(Strategy strategy) const noexcept {
    ScoreTerms out;
    out.linkQuality = linkQuality;
    out.numaLocality = numaLocality;
    out.packing = strategy == Strategy::kSpread ? packingSpread : packingBinpack;
    out.brokenSets = brokenSets & static_cast<std::uint8_t>(~kSetAvoided);
    return out;
  }
};

static_assert(sizeof(PlainAnswer) == 16, "a request reads one answer per node: keep it 16 bytes");

struct PlainAnswers {
  static constexpr std::int64_t kMaxGpus = 8;
  std::array<PlainAnswer, kMaxGpus> byGpus;  // index k - 1

  // The k of a demand these answers cover, or 0 when it must go through checkFit and scoreTerms.
  static std::int64_t gpusOf(const PodDemand& demand) noexcept {
    const bool plain = demand.mig.empty() && !demand.minLink && !demand.singleNuma &&
                       !demand.sharedResource && demand.replicasOn == ReplicasOn::kAny &&
                       demand.largestContainerGpus < 0 && demand.gpus >= 1 &&
                       demand.gpus <= kMaxGpus &&
                       (!demand.dra || (!demand.dra->hasClaims() && !demand.dra->passedThrough()));
    return plain ? demand.gpus : 0;
  }
  const PlainAnswer& forGpus(std::int64_t k) const noexcept {
    return byGpus[static_cast<std::size_t>(k - 1)];
  }
};

// The answers for one node state, from checkFit and scoreTerms on each plain demand. `policy` must
// be the one the state was built under and the requests will decide with (the snapshot's).
PlainAnswers precomputePlainAnswers(const NodeState& state, const Policy& policy);

}  // namespace gte
