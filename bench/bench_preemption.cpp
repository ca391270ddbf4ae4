// Preemption by topology (core/preemption_planner.h; docs/placement-quality.md, "Preemption"): a
// node filled with GPU pods of mixed priorities, then a higher-priority pod asking for k
// NVLink-connected GPUs (`min-link: nvlink`). Per node template and k, over seeded fills:
//   - scheduler: kube-scheduler's own dry run (every lower-priority pod removed, then reprieved
//     most important first while the GPU count still fits), the victims evicted whatever GPUs they
//     free; satisfied when the device plugin's pick over the freed GPUs is all-NVLink;
//   - extender, proposed only: the extender judging only the dry run's victims (what it did
//     before topology-minimal preemption): the node is vetoed when they free no usable set, else
//     the fewest of them that do;
//   - extender: topology-minimal preemption, any lower-priority GPU pod of the node;
//   - ideal: the fewest evictions of lower-priority pods that let the pod fit (brute force,
//     priorities ignored beyond the preemptor's).
// Prints, as mean±sd over the seeds: the share of preemptors satisfied on the node, evictions per
// satisfied preemptor, evictions per preemptor that satisfied nothing (the scheduler's own, where
// its victims free no usable set), the GPU-hours the evictions destroy per preemptor (each victim's
// GPUs times the hours it had run), and the preemptor's wait: none when preemption gives it its
// set, else until pods leaving on their own free one. Run times are a model: every fill pod has run
// an exponential time of mean --mean-hours (24) and has as long again left, drawn independently
// (the running pods of a steady state with exponential run times).
//
//   build/bin/bench_preemption [--pods OPENB_CSV] [--fills 200] [--seeds 1,2,3,4,5]
//                              [--mean-hours 24]
// With --pods, fill pods' GPU counts are drawn from the trace's GPU pods (1, 2, 4 or 8 GPUs; other
// counts are skipped), else from the openb multigpu50 mix.
#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench_flags.h"
#include "core/node_charges.h"
#include "core/node_decider.h"
#include "core/node_state.h"
#include "core/pod_demand.h"
#include "core/preemption_planner.h"
#include "openb_gpu_counts.h"
#include "policy/default_policy.h"
#include "seed_stats.h"
#include "sim/node_template.h"

namespace {

using namespace gte;

struct FillPod {
  std::string uid;
  int gpus = 0;
  std::int64_t priority = 0;
  Allocation allocation;
  double ranHours = 0;   // what an eviction destroys (no checkpoint)
  double leftHours = 0;  // until it ends on its own
};

struct Tally {
  int preemptors = 0;
  int satisfied = 0;
  long evictions = 0;        // of satisfied preemptors
  long wastedEvictions = 0;  // evictions that satisfied nothing
  double gpuHoursDestroyed = 0;
  double waitHours = 0;
};

PodDemand demandOf(int gpus, bool nvlink, const Policy& policy) {
  // Copied from strings built once: GCC 12 -O3 warns falsely on short literals assigned here
  // (PR 105329).
  static const std::string kName("preemptor"), kNs("bench"), kGpu("nvidia.com/gpu"),
      kMinLink("gputopo.dev/min-link"), kNvlink("nvlink");
  PodInfo pod;
  pod.name = kName;
  pod.ns = kNs;
  pod.uid = kName;
  pod.requests.set(kGpu, Quantity::fromUnits(gpus));
  if (nvlink) pod.annotations[kMinLink] = kNvlink;
  auto demand = parsePodDemand(pod, policy);
  if (!demand.ok()) std::abort();
  return *demand;
}

NodeStateConstSharedPtr charged(const NodeState& read, const std::vector<FillPod>& pods,
                                const Policy& policy) {
  auto charges = std::make_shared<NodeCharges>();
  for (const FillPod& p : pods)
    charges->put(PodCharge{p.uid, true, p.allocation, 0});
  return chargeNodeState(read, charges, policy);
}

// The one per-node decision filter makes (NodeDecider), as preempt's planner asks it.
bool fits(const PodDemand& demand, const NodeState& state, const Policy& policy) {
  return NodeDecider(demand, policy)
      .decide(NodeCandidate{{}, &state, {}, nullptr}, DecisionPart::kVerdict)
      .fit.fits();
}

bool fitsWithout(const PodDemand& demand, const NodeState& state,
                 const std::vector<std::string>& gone, const Policy& policy) {
  return fits(demand, *nodeStateWithout(state, gone, policy), policy);
}

// The GPUs a pod that fits gets there: the decision's placement.
Allocation placementOf(const PodDemand& demand, const NodeState& state, const Policy& policy) {
  NodePlacement placement;
  NodeDecider(demand, policy)
      .decide(NodeCandidate{{}, &state, {}, nullptr}, DecisionPart::kVerdict, &placement);
  return placement.allocation;
}

// kube-scheduler's dry run on GPU counts: remove every lower-priority pod, reprieve the most
// important first while the count still fits.
std::vector<const FillPod*> dryRun(const std::vector<FillPod>& pods, int free, int k,
                                   std::int64_t preemptor) {
  std::vector<const FillPod*> lower;
  for (const FillPod& p : pods) {
    if (p.priority < preemptor) lower.push_back(&p);
  }
  int released = 0;
  for (const FillPod* p : lower)
    released += p->gpus;
  if (free + released < k) return {};
  std::stable_sort(lower.begin(), lower.end(),
                   [](const FillPod* a, const FillPod* b) { return a->priority > b->priority; });
  std::vector<const FillPod*> victims;
  for (const FillPod* p : lower) {
    if (free + released - p->gpus >= k) {
      released -= p->gpus;  // reprieved
    } else {
      victims.push_back(p);
    }
  }
  return victims;
}

std::vector<std::string> uids(const std::vector<const FillPod*>& pods) {
  std::vector<std::string> out;
  for (const FillPod* p : pods)
    out.push_back(p->uid);
  return out;
}

// The fewest lower-priority pods whose eviction lets the pod fit (the first such set found);
// nullopt when none does.
std::optional<std::vector<std::string>> idealVictims(const PodDemand& demand,
                                                     const NodeState& state,
                                                     const std::vector<FillPod>& pods,
                                                     std::int64_t preemptor, const Policy& policy) {
  std::vector<const FillPod*> lower;
  for (const FillPod& p : pods) {
    if (p.priority < preemptor) lower.push_back(&p);
  }
  const std::size_t n = lower.size();
  std::optional<std::vector<std::string>> best;
  for (std::uint32_t mask = 1; mask < (1U << n); ++mask) {
    const int count = __builtin_popcount(mask);
    if (best && count >= static_cast<int>(best->size())) continue;
    std::vector<std::string> gone;
    for (std::size_t i = 0; i < n; ++i) {
      if ((mask >> i) & 1U) gone.push_back(lower[i]->uid);
    }
    if (fitsWithout(demand, state, gone, policy)) best = std::move(gone);
  }
  return best;
}

// The GPU-hours evicting `victims` destroys: each one's GPUs times the hours it had run.
double gpuHoursOf(const std::vector<FillPod>& pods, const std::vector<std::string>& victims) {
  double hours = 0;
  for (const FillPod& p : pods) {
    if (std::find(victims.begin(), victims.end(), p.uid) != victims.end()) {
      hours += p.gpus * p.ranHours;
    }
  }
  return hours;
}

// How long the preemptor waits once `evicted` are gone: until the pods left, ending on their own
// in order, free a set it fits (0 when it fits at once).
double waitHours(const PodDemand& demand, const NodeState& state, const std::vector<FillPod>& pods,
                 std::vector<std::string> evicted, const Policy& policy) {
  std::vector<const FillPod*> staying;
  for (const FillPod& p : pods) {
    if (std::find(evicted.begin(), evicted.end(), p.uid) == evicted.end()) staying.push_back(&p);
  }
  std::sort(staying.begin(), staying.end(),
            [](const FillPod* a, const FillPod* b) { return a->leftHours < b->leftHours; });
  double now = 0;
  for (const FillPod* p : staying) {
    if (fitsWithout(demand, state, evicted, policy)) return now;
    evicted.push_back(p->uid);
    now = p->leftHours;
  }
  return now;
}

}  // namespace

int main(int argc, char** argv) {
  std::string trace;
  int fills = 200;
  double meanHours = 24;
  std::vector<std::uint64_t> seeds = {1, 2, 3, 4, 5};
  const bench::Flag flags[] = {
      {"--pods", &trace},
      {"--fills", &fills, 1},
      {"--mean-hours", &meanHours, 0.01},
      {"--seeds", &seeds},
  };
  if (!bench::parseFlags(argc, argv, flags, "bench_preemption")) return 2;
  const std::vector<int> sizes = bench::openbGpuCounts(trace, "bench_preemption");
  const Policy policy = defaultPolicy();
  std::printf(
      "preemption of a k-GPU min-link nvlink pod on a full node, %d fills x %zu seeds, "
      "fill pods from %s, priorities 0-3 uniform, run times exponential of mean %.0f h\n",
      fills, seeds.size(), trace.empty() ? "the multigpu50 mix" : "the trace", meanHours);
  std::printf("%-10s %2s  %-28s %13s %12s %12s %14s %12s\n", "node", "k", "chooser", "satisfied",
              "evict/sat", "wasted/pre", "GPUh lost/pre", "wait h/pre");
  for (const char* name : {"dgx1v", "hgx-h100"}) {
    const sim::NodeTemplate* machine = sim::findNodeTemplate(name);
    const NodeInfo node = sim::makeTemplateNode(*machine, name, policy.labelPrefix);
    const NodeStateConstSharedPtr read = readNodeState(node, policy);
    for (const int k : {2, 4}) {
      const PodDemand preemptor = demandOf(k, true, policy);
      // Per seed, so each figure is a mean and a standard deviation over the seeds.
      std::vector<std::array<Tally, 4>> perSeed;
      for (const std::uint64_t seed : seeds) {
        Tally scheduler, proposedOnly, extender, ideal;
        std::mt19937_64 rng(seed * 1000003ULL + static_cast<std::uint64_t>(k));
        std::exponential_distribution<double> runTime(1.0 / meanHours);
        for (int f = 0; f < fills; ++f) {
          // Fill the node until the next pod does not fit.
          std::vector<FillPod> pods;
          NodeStateConstSharedPtr state = charged(*read, pods, policy);
          for (int attempt = 0; attempt < 64 && state->freeCount > 0; ++attempt) {
            const int gpus = sizes[rng() % sizes.size()];
            const PodDemand fill = demandOf(gpus, false, policy);
            if (!fits(fill, *state, policy)) continue;
            FillPod pod;
            // Appended, not `"f" + ...`: GCC 12 -O3 warns falsely on that (PR 105329).
            pod.uid.assign(1, 'f').append(std::to_string(pods.size()));
            pod.gpus = gpus;
            pod.priority = static_cast<std::int64_t>(rng() % 4);
            pod.ranHours = runTime(rng);
            pod.leftHours = runTime(rng);
            pod.allocation = placementOf(fill, *state, policy);
            pods.push_back(pod);
            state = charged(*read, pods, policy);
          }
          if (fits(preemptor, *state, policy)) continue;  // no preemption needed
          const std::int64_t high = 10;
          const auto victims = dryRun(pods, state->freeCount, k, high);
          if (victims.empty()) continue;  // the dry run finds no candidate: nobody tries
          for (Tally* t : {&scheduler, &proposedOnly, &extender, &ideal})
            ++t->preemptors;
          const std::vector<std::string> proposed = uids(victims);
          // kube-scheduler alone evicts its victims whatever GPUs they free, then waits.
          scheduler.gpuHoursDestroyed += gpuHoursOf(pods, proposed);
          if (fitsWithout(preemptor, *state, proposed, policy)) {
            ++scheduler.satisfied;
            scheduler.evictions += static_cast<long>(proposed.size());
          } else {
            scheduler.wastedEvictions += static_cast<long>(proposed.size());
            scheduler.waitHours += waitHours(preemptor, *state, pods, proposed, policy);
          }
          std::vector<VictimInfo> infos;
          for (const FillPod* v : victims) {
            VictimInfo info;
            info.uid = v->uid;
            info.priority = v->priority;
            info.priorityKnown = true;
            info.ranSeconds = static_cast<std::int64_t>(v->ranHours * 3600);
            info.requests.set("nvidia.com/gpu", Quantity::fromUnits(v->gpus));
            infos.push_back(info);
          }
          const VictimPlan narrow = planVictims(preemptor, infos, *state, policy);
          if (narrow.helps()) {
            ++proposedOnly.satisfied;
            proposedOnly.evictions += static_cast<long>(narrow.victims.size());
            proposedOnly.gpuHoursDestroyed += gpuHoursOf(pods, narrow.victims);
          } else {
            proposedOnly.waitHours += waitHours(preemptor, *state, pods, {}, policy);  // vetoed
          }
          for (const FillPod& p : pods) {
            if (p.priority >= high ||
                std::find(proposed.begin(), proposed.end(), p.uid) != proposed.end()) {
              continue;
            }
            VictimInfo info;
            info.uid = p.uid;
            info.proposed = false;
            info.priority = p.priority;
            info.priorityKnown = true;
            info.ranSeconds = static_cast<std::int64_t>(p.ranHours * 3600);
            info.requests.set("nvidia.com/gpu", Quantity::fromUnits(p.gpus));
            infos.push_back(info);
          }
          const VictimPlan wide = planVictims(preemptor, infos, *state, policy);
          if (wide.helps()) {
            ++extender.satisfied;
            extender.evictions += static_cast<long>(wide.victims.size());
            extender.gpuHoursDestroyed += gpuHoursOf(pods, wide.victims);
          } else {
            extender.waitHours += waitHours(preemptor, *state, pods, {}, policy);
          }
          if (const auto best = idealVictims(preemptor, *state, pods, high, policy)) {
            ++ideal.satisfied;
            ideal.evictions += static_cast<long>(best->size());
            ideal.gpuHoursDestroyed += gpuHoursOf(pods, *best);
          } else {
            ideal.waitHours += waitHours(preemptor, *state, pods, {}, policy);
          }
        }
        perSeed.push_back({scheduler, proposedOnly, extender, ideal});
      }
      const char* const choosers[] = {"scheduler alone", "extender, proposed only",
                                      "extender (topology-minimal)", "ideal (fewest evictions)"};
      int preemptors = 0;
      for (const auto& seed : perSeed)
        preemptors += seed[0].preemptors;
      for (std::size_t c = 0; c < 4; ++c) {
        std::vector<double> satisfied, perSatisfied, wasted, destroyed, waited;
        for (const auto& seed : perSeed) {
          const Tally& t = seed[c];
          satisfied.push_back(t.preemptors ? 100.0 * t.satisfied / t.preemptors : 0.0);
          perSatisfied.push_back(t.satisfied ? static_cast<double>(t.evictions) / t.satisfied
                                             : 0.0);
          wasted.push_back(t.preemptors ? static_cast<double>(t.wastedEvictions) / t.preemptors
                                        : 0.0);
          destroyed.push_back(t.preemptors ? t.gpuHoursDestroyed / t.preemptors : 0.0);
          waited.push_back(t.preemptors ? t.waitHours / t.preemptors : 0.0);
        }
        std::printf(
            "%-10s %2d  %-28s %6.1f±%-5.1f%% %6.2f±%-5.2f %6.2f±%-5.2f %7.0f±%-6.0f %6.1f±%-5.1f\n",
            name, k, choosers[c], bench::mean(satisfied), bench::sd(satisfied),
            bench::mean(perSatisfied), bench::sd(perSatisfied), bench::mean(wasted),
            bench::sd(wasted), bench::mean(destroyed), bench::sd(destroyed), bench::mean(waited),
            bench::sd(waited));
      }
      std::printf("%-10s %2d  (%d preemptors over %zu seeds)\n", name, k, preemptors, seeds.size());
    }
  }
  return 0;
}
