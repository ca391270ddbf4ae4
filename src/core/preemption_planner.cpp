#include "core/preemption_planner.h"

#include <algorithm>
#include <numeric>
#include <optional>

#include "core/node_charges.h"
#include "core/node_decider.h"
#include "model/gpu_request.h"

namespace gte {
namespace {

// The per-node decision filter makes (claims by the DRA allocator's first-fit, the rest by the
// device plugin's pick), on the node as it would be with `gone` evicted.
FitOutcome fitWithout(const NodeDecider& decide, const std::vector<std::string>& gone,
                      const NodeState& state, const Policy& policy) {
  const NodeStateConstSharedPtr without = nodeStateWithout(state, gone, policy);
  return decide.decide(NodeCandidate{{}, without.get(), {}, nullptr}, DecisionPart::kVerdict).fit;
}

// Per resource name, what evicting `pods` frees.
ResourceList freedBy(const std::vector<const VictimInfo*>& pods) {
  ResourceList out;
  for (const VictimInfo* v : pods) {
    for (const auto& entry : v->requests.entries())
      out.add(entry.first, entry.second);
  }
  return out;
}

bool covers(const ResourceList& freed, const ResourceList& need) {
  for (const auto& entry : need.entries()) {
    if (freed.get(entry.first) < entry.second) return false;
  }
  return true;
}

// The search over the GPU pods of the node (see the header).
class VictimSearch {
 public:
  VictimSearch(const PodDemand& demand, const std::vector<VictimInfo>& victims,
               const NodeState& state, const Policy& policy)
      : decide_(demand, policy), state_(state), policy_(policy) {
    for (const VictimInfo& v : victims) {
      if (!v.holdsGpus) {
        if (v.proposed) kept_.push_back(&v);
        continue;
      }
      pool_.push_back(&v);
      if (v.proposed) proposedGpu_.push_back(&v);
    }
    std::stable_sort(pool_.begin(), pool_.end(), [](const VictimInfo* a, const VictimInfo* b) {
      return a->priority < b->priority;
    });
    for (const VictimInfo* v : pool_)
      work_.push_back(evictionWork(*v));
    need_ = freedBy(proposedGpu_);
  }

  // Every pod of the pool gone (and the proposed ones without GPUs): the bound of what evicting
  // can do here.
  FitOutcome withAllGone() { return fits(pool_); }

  // The best set, or nullopt when none was found within the allowance.
  std::optional<std::vector<const VictimInfo*>> best() {
    if (fits({}).fits()) return std::vector<const VictimInfo*>{};
    // Priority levels, lowest first: a set whose most important pod is at level h is tried only
    // once every set below h failed.
    std::vector<std::int64_t> levels;
    for (const VictimInfo* v : pool_) {
      if (levels.empty() || levels.back() != v->priority) levels.push_back(v->priority);
    }
    std::size_t upTo = 0;  // pool_[0, upTo) have priority <= the level
    for (const std::int64_t level : levels) {
      while (upTo < pool_.size() && pool_[upTo]->priority <= level)
        ++upTo;
      for (std::size_t k = 1; k <= upTo; ++k) {
        auto found = bestOfSize(upTo, k, level);
        if (cut_) return std::nullopt;
        if (found) return found;
      }
    }
    return std::nullopt;  // unreachable when withAllGone fits; kept for safety
  }

  int trials() const noexcept { return trials_; }
  bool cut() const noexcept { return cut_; }

 private:
  FitOutcome fits(const std::vector<const VictimInfo*>& gpuVictims) {
    std::vector<std::string> gone;
    for (const VictimInfo* v : kept_)
      gone.push_back(v->uid);
    for (const VictimInfo* v : gpuVictims)
      gone.push_back(v->uid);
    ++trials_;
    return fitWithout(decide_, gone, state_, policy_);
  }

  // Among the k-sets of pool_[0, n) holding a pod at `level`, the feasible one with the lowest
  // sum of priorities, then the least work destroyed (the first such in order on ties).
  std::optional<std::vector<const VictimInfo*>> bestOfSize(std::size_t n, std::size_t k,
                                                           std::int64_t level) {
    std::vector<std::size_t> pick(k);
    std::iota(pick.begin(), pick.end(), 0);
    std::optional<std::vector<const VictimInfo*>> best;
    std::int64_t bestSum = 0;
    double bestLost = 0;
    while (true) {
      std::vector<const VictimInfo*> set;
      std::int64_t sum = 0;
      double lost = 0;
      bool atLevel = false;
      for (const std::size_t i : pick) {
        set.push_back(pool_[i]);
        sum += pool_[i]->priority;
        lost += work_[i];
        atLevel = atLevel || pool_[i]->priority == level;
      }
      const bool better = !best || sum < bestSum || (sum == bestSum && lost < bestLost);
      if (atLevel && better && covers(freedBy(set), need_)) {
        if (trials_ >= kVictimSearchTrials) {
          cut_ = true;
          return std::nullopt;
        }
        if (fits(set).fits()) {
          best = std::move(set);
          bestSum = sum;
          bestLost = lost;
        }
      }
      // The next combination in lexicographic order.
      std::size_t i = k;
      while (i > 0 && pick[i - 1] == n - k + (i - 1))
        --i;
      if (i == 0) break;
      ++pick[i - 1];
      for (std::size_t j = i; j < k; ++j)
        pick[j] = pick[j - 1] + 1;
    }
    return best;
  }

  NodeDecider decide_;
  const NodeState& state_;
  const Policy& policy_;
  std::vector<const VictimInfo*> kept_;         // proposed, without GPUs: always evicted
  std::vector<const VictimInfo*> pool_;         // GPU pods that may be evicted, by priority
  std::vector<double> work_;                    // evictionWork(*pool_[i]), worked out once
  std::vector<const VictimInfo*> proposedGpu_;  // the scheduler's GPU victims
  ResourceList need_;                           // what they free: any set must free as much
  int trials_ = 0;
  bool cut_ = false;
};

// The scheduler's victims, minimised greedily from the least important up: a GPU victim is kept
// only when the pod does not fit without evicting it. The fallback when the search is cut.
std::vector<std::string> greedyProposed(const NodeDecider& decide,
                                        const std::vector<VictimInfo>& victims,
                                        const NodeState& state, const Policy& policy) {
  std::vector<const VictimInfo*> proposed;
  for (const VictimInfo& v : victims) {
    if (v.proposed) proposed.push_back(&v);
  }
  std::vector<bool> keep(proposed.size(), true);
  for (std::size_t i = proposed.size(); i-- > 0;) {
    if (!proposed[i]->holdsGpus) continue;
    keep[i] = false;
    std::vector<std::string> trial;
    for (std::size_t j = 0; j < proposed.size(); ++j) {
      if (keep[j]) trial.push_back(proposed[j]->uid);
    }
    if (!fitWithout(decide, trial, state, policy).fits()) keep[i] = true;
  }
  std::vector<std::string> out;
  for (std::size_t j = 0; j < proposed.size(); ++j) {
    if (keep[j]) out.push_back(proposed[j]->uid);
  }
  return out;
}

// Most important first: by priority where every victim's is known, else the scheduler's order
// with the extender's own choices after it (most important first among them).
std::vector<std::string> ordered(const std::vector<VictimInfo>& victims,
                                 const std::vector<const VictimInfo*>& chosen) {
  std::vector<const VictimInfo*> out;
  for (const VictimInfo& v : victims) {
    if (v.proposed && std::find(chosen.begin(), chosen.end(), &v) != chosen.end()) {
      out.push_back(&v);
    }
  }
  std::vector<const VictimInfo*> extra;
  for (const VictimInfo* v : chosen) {
    if (!v->proposed) extra.push_back(v);
  }
  std::stable_sort(extra.begin(), extra.end(), [](const VictimInfo* a, const VictimInfo* b) {
    return a->priority > b->priority;
  });
  out.insert(out.end(), extra.begin(), extra.end());
  const bool allKnown =
      std::all_of(out.begin(), out.end(), [](const VictimInfo* v) { return v->priorityKnown; });
  if (allKnown) {
    std::stable_sort(out.begin(), out.end(), [](const VictimInfo* a, const VictimInfo* b) {
      return a->priority > b->priority;
    });
  }
  std::vector<std::string> uids;
  for (const VictimInfo* v : out)
    uids.push_back(v->uid);
  return uids;
}

}  // namespace

double evictionWork(const VictimInfo& victim) {
  const Result<GpuRequest> devices = gpuRequestFrom(victim.requests);
  if (!devices) return 0;
  std::int64_t count = devices->gpus + devices->sharedGpus;
  for (const MigRequest& mig : devices->mig)
    count += mig.count;
  return static_cast<double>(count) *
         static_cast<double>(std::max<std::int64_t>(0, victim.ranSeconds));
}

VictimPlan planVictims(const PodDemand& demand, const std::vector<VictimInfo>& victims,
                       const NodeState& state, const Policy& policy) {
  VictimSearch search(demand, victims, state, policy);
  VictimPlan plan;
  plan.withAllGone = search.withAllGone();
  if (!plan.helps()) {
    plan.trials = search.trials();
    return plan;
  }
  std::optional<std::vector<const VictimInfo*>> best = search.best();
  plan.trials = search.trials();
  if (best) {
    std::vector<const VictimInfo*> chosen = *best;
    for (const VictimInfo& v : victims) {
      if (v.proposed && !v.holdsGpus) chosen.push_back(&v);
    }
    plan.victims = ordered(victims, chosen);
  } else {
    plan.searchCut = search.cut();
    plan.victims = greedyProposed(NodeDecider(demand, policy), victims, state, policy);
  }
  // Nothing GPU-wise needs evicting, yet the scheduler's own dry run needs victims here (its
  // accounting disagrees with the labels): leave its choice alone rather than drop the node.
  if (plan.victims.empty()) {
    for (const VictimInfo& v : victims) {
      if (v.proposed) plan.victims.push_back(v.uid);
    }
  }
  return plan;
}

}  // namespace gte
