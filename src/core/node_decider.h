#pragma once
// One pod decided on each node of a request: decide() answers, in one NodeDecision, whether it
// fits (checkFit's verdict and reason), the terms and 0..100 score it gets there (scoreTerms,
// weightedScore, less what breaking a scarce NVLink set costs: core/scarce_sets.h), how well linked
// its GPUs are, what it would get (the device plugin's pick or the DRA allocator's first fit) and
// the route it takes (routeOn), with the answer of the pod's group on the node as an input
// (core/group_answers.h). For a plain demand (k whole GPUs, nothing else) on a node with
// precomputed answers the decision is read from them, which the snapshot builder computed with the
// same functions; any other demand, or a node without answers, calls them. This is the one place
// that decides: filter, prioritize, explain, bind's re-check, preemption, what-if and the simulator
// call decide() and only iterate and write what it answers. Pure, and inline: it runs once per node
// of every request.
//
// A pod with DRA claims (docs/dra.md) is decided by a DraDecider: the first-fit replica on the
// node's precomputed device order, then the same fit rules and score terms on the GPU set it
// gives. A pod the extender passes through (pod_demand.h) fits every node with no score terms.
// The decider then keeps first-fit scratch state: one request's loop uses it, on one thread.
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "core/claims_as_gpus.h"
#include "core/dra_decision.h"
#include "core/fit.h"
#include "core/fit_outcome.h"
#include "core/node_candidate.h"
#include "core/node_decision.h"
#include "core/node_state.h"
#include "core/plain_answers.h"
#include "core/pod_demand.h"
#include "core/pod_route.h"
#include "core/predict_allocation.h"
#include "core/scarce_sets.h"
#include "core/score_node.h"
#include "core/set_quality.h"
#include "dra_placement/dra_node_state.h"
#include "policy/policy.h"

namespace gte {

// How many candidates ahead a loop asks for a node's cache lines (NodeDecider::prefetch): enough
// to overlap the misses of consecutive nodes, few enough that the lines are still in L1 when their
// node comes.
inline constexpr std::size_t kCandidatePrefetchAhead = 8;

// The candidate index of a node decided outside a request's candidate list.
inline constexpr std::size_t kNoCandidate = static_cast<std::size_t>(-1);

class NodeDecider {
 public:
  // `demand`, `policy`, `group` and `scarce` must outlive the decider. `group`: a pod group
  // member's answers, one per candidate of the request, in its order (null: the pod is decided
  // alone). `scarce`: the nodes holding each size of free all-NVLink set (core/scarce_sets.h),
  // what breaking one costs the score; null: breaking a set costs nothing (doors that ask for
  // the verdict alone).
  // Temporaries would dangle: the decider keeps references (an ASan run caught a test passing
  // defaultPolicy() straight in).
  NodeDecider(PodDemand&&, const Policy&, const GroupAnswers* = nullptr,
              const ScarceSets* = nullptr) = delete;
  NodeDecider(const PodDemand&, Policy&&, const GroupAnswers* = nullptr,
              const ScarceSets* = nullptr) = delete;
  NodeDecider(const PodDemand& demand, const Policy& policy, const GroupAnswers* group = nullptr,
              const ScarceSets* scarce = nullptr)
      : demand_(demand),
        policy_(policy),
        group_(group),
        plainGpus_(PlainAnswers::gpusOf(demand)),
        routeByNode_(demand.draClaims() && !passedThrough()) {
    // What each combination of broken set sizes costs, once per request rather than per node.
    if (scarce != nullptr) {
      for (std::uint8_t broken = 1; broken <= kScarceMask; ++broken)
        scarcePoints_[broken] =
            static_cast<std::int16_t>(scarceSetPoints(broken, *scarce, policy.scarceSets.points));
    }
    if (!routeByNode_) {
      route_ = passedThrough() ? PodRoute::kPassedThrough : PodRoute::kDevicePlugin;
    }
    if (!demand.draClaims()) return;
    dra_.emplace(*demand.dra);
    // "N GPUs of one class": on nodes whose plain order is that class's, decide as N + the pod's
    // own nvidia.com/gpu from the node state (core/claims_as_gpus.h).
    claimsAsGpus_ = gte::claimsAsGpus(demand);
    if (claimsAsGpus_) claimsAsGpusPlain_ = PlainAnswers::gpusOf(*claimsAsGpus_);
  }

  // The pod on candidate `index` of the request (`node`), the parts `parts` asks for; with
  // `placement`, also what the pod would get there.
  // Inlined into each loop (it runs per node of every request), the rare placement kept apart.
  [[gnu::always_inline]] NodeDecision decide(const NodeCandidate& node, std::size_t index,
                                             DecisionPart parts = kWholeDecision,
                                             NodePlacement* placement = nullptr) const {
    NodeDecision out;
    if (node.state == nullptr) {
      out.resolved = false;
      out.fit.verdict = Verdict::kUnresolvable;
      return out;
    }
    // Without claims the route is the pod's, whatever the node (computed once). With claims it is
    // routeOn's, read from the node's precomputed answer where it has one: the node's DRA state
    // is a cache miss of its own at thousands of nodes.
    if (!routeByNode_) {
      out.route = route_;
    } else {
      out.route = claimsAsGpus(node) ? PodRoute::kClaimsAsGpus : PodRoute::kDraFirstFit;
    }
    if (group_ != nullptr && index < group_->nodes.size()) {
      out.group = group_->nodes[index];
      if (out.group == GroupAnswers::Kind::kRefused) {
        out.groupRefusal = group_->refusal[index];
        out.fit.verdict = group_->refusals[out.groupRefusal].verdict;
      } else if (out.group == GroupAnswers::Kind::kPlanned) {
        out.score = kMaxNodeScore;  // the held GPUs were kept for the member: fit, rank first
      }
    }
    const bool decided = out.group == GroupAnswers::Kind::kDecide;
    if (decided && asks(parts, DecisionPart::kVerdict)) out.fit = fit(node);
    if (decided && asks(parts, DecisionPart::kScore | DecisionPart::kSet)) {
      out.terms = terms(node);
      out.score = weightedScore(out.terms, policy_);
      // Without a branch: whether a node breaks a set varies node by node, and a mispredicted
      // branch per node cost more than the lookup (scarcePoints_[0] is 0).
      out.terms.scarceSetPoints = scarcePoints_[out.terms.brokenSets & kScarceMask];
      out.score = std::max(0, out.score - out.terms.scarceSetPoints);
      if (asks(parts, DecisionPart::kSet) && out.terms.fits()) out.set = set(node);
    }
    if (placement != nullptr) place(node, *placement);
    return out;
  }

  // The pod on a node outside a request's candidates (bind's re-check, preemption, what-if, the
  // simulator): decided as a pod of no group.
  NodeDecision decide(const NodeCandidate& node, DecisionPart parts = kWholeDecision,
                      NodePlacement* placement = nullptr) const {
    return decide(node, kNoCandidate, parts, placement);
  }

  // Whether the pod's devices on this node come from kube-scheduler's DRA allocator: its claims,
  // or its nvidia.com/gpu where the node hands that out through DRA.
  bool allocatedByDra(const NodeState& state) const noexcept {
    if (!demand_.dra || passedThrough()) return false;
    return demand_.draClaims() || (demand_.gpus > 0 && state.allocator == GpuAllocator::kDra &&
                                   demand_.dra->extendedClass >= 0);
  }

  // Starts loading the cache lines fit() and terms() will read of `node`: its precomputed answer,
  // or the state's first line and, for whole GPUs, its inline pick. Reads nothing itself.
  void prefetch(const NodeCandidate& node) const noexcept {
    // An exclusive pod's decision reads the state's first line (sharesGpus) before its answer.
    if (exclusive_ && node.state != nullptr) __builtin_prefetch(node.state);
    if (usesAnswers(node)) {
      __builtin_prefetch(&node.plain->forGpus(plainGpus_));
      return;
    }
    if (claimsAsGpusPlain_ > 0 && node.plain != nullptr) {
      __builtin_prefetch(&node.plain->forGpus(claimsAsGpusPlain_));
      return;
    }
    if (node.state == nullptr) return;
    __builtin_prefetch(node.state);
    const auto k = static_cast<std::size_t>(demand_.gpus);
    if (k > 0 && k < NodeState::kInlinePicks) {
      __builtin_prefetch(&node.state->devicePluginPicks[k]);
    }
  }

 private:
  // The fit check on a resolved candidate (`node.state` set).
  FitOutcome fit(const NodeCandidate& node) const {
    if (passedThrough()) return FitOutcome{};
    // Asked before the precomputed answer, which is every isolation's (it reads the node's
    // state: only pods that ask for exclusive GPUs pay for the line).
    if (exclusive_) {
      if (const auto refused = sharingRefusal(demand_, *node.state)) return *refused;
      if (exclusiveMig_) {
        if (const auto refused = migSharingRefusal(demand_, *node.state)) return *refused;
      }
    }
    if (claimsAsGpus(node)) {
      return node.plain != nullptr && claimsAsGpusPlain_ > 0
                 ? node.plain->forGpus(claimsAsGpusPlain_).fit()
                 : checkFit(*claimsAsGpus_, *node.state, policy_);
    }
    if (dra_) {
      const FitOutcome claims = dra_->fit(demand_, *node.state, policy_);
      // On a device-plugin node the pod's nvidia.com/gpu and MIG requests are the plugin's.
      if (!claims.fits() || !devicePluginPart(*node.state)) return claims;
    }
    return usesAnswers(node) ? node.plain->forGpus(plainGpus_).fit()
                             : checkFit(demand_, *node.state, policy_);
  }

  // The score terms on a resolved candidate; all -1 when the pod asks for no GPUs or the node
  // offers it no placement.
  ScoreTerms terms(const NodeCandidate& node) const {
    if (demand_.empty() || passedThrough()) return ScoreTerms{};
    if (exclusive_ && refusedAsShared(node)) return ScoreTerms{};
    if (claimsAsGpus(node)) {
      return node.plain != nullptr && claimsAsGpusPlain_ > 0
                 ? node.plain->forGpus(claimsAsGpusPlain_).terms(demand_.strategy)
                 : scoreTerms(*claimsAsGpus_, *node.state);
    }
    if (dra_ && !devicePluginPart(*node.state)) return dra_->terms(demand_, *node.state);
    return usesAnswers(node) ? node.plain->forGpus(plainGpus_).terms(demand_.strategy)
                             : scoreTerms(demand_, *node.state);
  }

  // Out of line: terms() is inlined into prioritize's per-node loop, which must stay as small as
  // it is for the pods that ask for nothing exclusive (most of them).
  [[gnu::noinline]] bool refusedAsShared(const NodeCandidate& node) const {
    return sharingRefusal(demand_, *node.state) ||
           (exclusiveMig_ && migSharingRefusal(demand_, *node.state));
  }

  [[gnu::noinline]] void place(const NodeCandidate& node, NodePlacement& placement) const {
    placement.allocation = allocation(node);
    // Replicas of shared GPUs land by tenants, not on the whole-GPU pick (docs/sharing.md).
    placement.devicePluginPick =
        node.state->sharesGpus ? nullptr : wholeGpuPick(demand_, *node.state);
    placement.dra = draPlacement(node);
  }

  // The devices the DRA allocator is predicted to take for the pod on a resolved candidate
  // (explain shows them device by device); nullopt where its devices do not come from DRA.
  std::optional<DraPlacement> draPlacement(const NodeCandidate& node) const {
    if (!allocatedByDra(*node.state)) return std::nullopt;
    DraDecider decider(*demand_.dra);
    return decider.place(*node.state);
  }

  // The GPUs and MIG instances the pod would get on a resolved candidate, by the route fit() and
  // terms() take: claims that read as N GPUs, the node's first-fit pick of them; other claims, the
  // DRA allocator's first-fit set; whole GPUs and MIG instances, the device plugin's pick.
  // Incomplete where nothing is allocated.
  Allocation allocation(const NodeCandidate& node) const {
    if (claimsAsGpus(node)) return predictAllocation(*claimsAsGpus_, *node.state);
    if (dra_) {
      const DraPlacement placed = dra_->place(*node.state);
      Allocation out;
      out.complete = placed.outcome == DraOutcome::kPlaced;
      for (GpuMask rest = placed.pick.gpus; rest != 0; rest &= rest - 1)
        out.gpus.push_back(std::countr_zero(rest));
      return out;
    }
    return predictAllocation(demand_, *node.state);
  }

  // How well linked the whole GPUs are that the pod would get on a resolved candidate that fits:
  // what placement regret compares (unknown for fewer than two GPUs). From the same line of the
  // precomputed answer the terms come from.
  SetQuality set(const NodeCandidate& node) const noexcept {
    return usesAnswers(node) ? node.plain->forGpus(plainGpus_).set()
                             : setQualityOf(demand_, *node.state);
  }

  bool usesAnswers(const NodeCandidate& node) const noexcept {
    return plainGpus_ > 0 && node.plain != nullptr;
  }

  bool passedThrough() const noexcept { return demand_.dra && demand_.dra->passedThrough(); }

  // The pod's claims are "N GPUs" of the class this DRA node hands nvidia.com/gpu out by: from
  // the node's precomputed answer where it has one (the same line the decision reads next), else
  // from its DRA state.
  bool claimsAsGpus(const NodeCandidate& node) const noexcept {
    if (!claimsAsGpus_) return false;
    if (node.plain != nullptr && claimsAsGpusPlain_ > 0) {
      return node.plain->forGpus(claimsAsGpusPlain_).draPlainClass == demand_.dra->plainClass &&
             demand_.dra->plainClass >= 0;
    }
    return routeOn(demand_, *node.state) == PodRoute::kClaimsAsGpus;
  }

  // Requests the device plugin serves on this node besides the claims: GPUs or MIG instances on
  // a node that does not hand nvidia.com/gpu out through DRA.
  bool devicePluginPart(const NodeState& state) const noexcept {
    const bool gpusByPlugin = demand_.gpus > 0 && state.allocator != GpuAllocator::kDra;
    return gpusByPlugin || !demand_.mig.empty();
  }

  const PodDemand& demand_;
  const Policy& policy_;
  const GroupAnswers* group_;
  std::int64_t plainGpus_;
  bool routeByNode_;                          // claims: the route depends on the node (routeOn)
  PodRoute route_ = PodRoute::kDevicePlugin;  // otherwise, the pod's route on every node
  // Exclusive GPUs asked (whole or MIG): shared nodes and shared MIG profiles refuse the pod
  // (sharingRefusal).
  bool exclusive_ =
      demand_.isolation == Isolation::kExclusive && (demand_.gpus > 0 || !demand_.mig.empty());
  // ... with MIG requests: shared MIG profiles refuse it too (migSharingRefusal, out of line).
  bool exclusiveMig_ = exclusive_ && !demand_.mig.empty();
  mutable std::optional<DraDecider> dra_;  // pods with claims: the first-fit's scratch
  std::optional<PodDemand> claimsAsGpus_;  // the claims as N whole GPUs, when they are that
  std::int64_t claimsAsGpusPlain_ = 0;
  // Index: a set of broken sizes (ScoreTerms::brokenSets); all 0 without the cluster's counts.
  static constexpr std::uint8_t kScarceMask = (1U << kScarceSetSizes.size()) - 1;
  std::array<std::int16_t, kScarceMask + 1> scarcePoints_{};
};

}  // namespace gte
