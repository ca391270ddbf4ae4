// The preempt verb of ExtenderService (kept apart from filter/prioritize: it is the only verb that
// asks "what if these pods were gone").
#include <algorithm>
#include <chrono>
#include <vector>

#include "core/compiled_pod.h"
#include "core/fit_outcome.h"
#include "core/node_state.h"
#include "core/preemption_planner.h"
#include "log/logger.h"
#include "model/gpu_request.h"
#include "service/cluster_backend.h"
#include "service/extender_service.h"
#include "service/group_preemption.h"
#include "service/group_preemption_memory.h"
#include "service/resolve_nodes.h"
#include "snapshot/cluster_snapshot.h"
#include "wire/extender_args.h"
#include "wire/extender_results.h"

namespace gte {
namespace {

// A victim that may hold what the extender accounts: GPUs or MIG instances, or devices through its
// ResourceClaims.
bool holdsDevices(const PodInfo& pod) {
  if (!pod.resourceClaims.empty()) return true;
  auto r = gpuRequestFrom(pod.requests);
  return !r || !r->empty();  // unreadable requests: assume it may hold GPUs
}

// Without a cluster cache the extender does not know which GPUs the victims hold, so it cannot
// judge the candidates: it passes them through unchanged (dropping none) in the Meta form.
std::vector<wire::MetaVictims> passThrough(const wire::PreemptionArgs& args) {
  std::vector<wire::MetaVictims> out;
  for (const auto& c : args.candidates) {
    wire::MetaVictims mv{c.node, {}, c.numPdbViolations};
    for (const auto& v : c.pods)
      mv.podUids.push_back(v.uid);
    out.push_back(std::move(mv));
  }
  return out;
}

// How long a pod has run, from its bind (0 when unknown): the work evicting it destroys.
std::int64_t ranSeconds(const PodInfo& pod, std::int64_t now) {
  return pod.boundAt ? std::max<std::int64_t>(0, now - *pod.boundAt) : 0;
}

std::int64_t unixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Topology-minimal preemption (core/preemption_planner.h): the other pods of the node the
// extender may evict instead of the scheduler's choice, the GPU pods of lower priority than the
// preemptor that are bound there, running and not being deleted.
void addOtherVictims(const PodInfo& preemptor, const std::string& node,
                     const ClusterBackend& cluster, std::int64_t now,
                     std::vector<VictimInfo>& victims) {
  for (PodInfo& pod : cluster.podsOnNode(node)) {
    if (pod.priority >= preemptor.priority || pod.deleting || pod.terminal() ||
        pod.uid == preemptor.uid || !holdsDevices(pod)) {
      continue;
    }
    const bool listed = std::any_of(victims.begin(), victims.end(),
                                    [&](const VictimInfo& v) { return v.uid == pod.uid; });
    if (listed) continue;
    VictimInfo info;
    info.uid = std::move(pod.uid);
    info.proposed = false;
    info.priority = pod.priority;
    info.priorityKnown = true;
    info.ranSeconds = ranSeconds(pod, now);
    info.requests = std::move(pod.requests);
    victims.push_back(std::move(info));
  }
}

void logVeto(const PodInfo& pod, const std::string& node, std::string_view reason) {
  log::info("preemption candidate vetoed: the pod does not fit even with every victim gone",
            {{"pod", pod.ns + "/" + pod.name}, {"node", node}, {"reason", reason}});
}

}  // namespace

Reply ExtenderService::preempt(std::string_view body) const {
  auto args = wire::parsePreemptionArgs(body);
  if (!args) return rejected(wire::Verb::kPreempt, args.error());
  if (!cluster_) return Reply{200, wire::writePreemptionResult(passThrough(*args))};
  auto loaded = syncedSnapshot(cluster_);
  if (!loaded) return undecided(wire::Verb::kPreempt, loaded.error());
  const ClusterSnapshotConstSharedPtr& snapshot = *loaded;
  const Policy& policy = *snapshot->policy;
  const CompiledPod compiled =
      compilePod(args->pod, policy, snapshot->dra.get(), cluster_->groupSizes());
  if (compiled.ownError() != nullptr) {
    // The pod cannot fit anywhere whatever is evicted: no candidate helps.
    return Reply{200, wire::writePreemptionResult({})};
  }
  const PodDemand& demand = *compiled.demand;
  // Every candidate is judged on this one snapshot: the what-ifs start from its node states.
  const std::int64_t now = unixNow();
  std::vector<std::vector<VictimInfo>> victimsOf;
  std::vector<PreemptCandidate> candidates;
  for (const auto& c : args->candidates) {
    std::vector<VictimInfo> victims;
    PreemptCandidate candidate{c.node, snapshot->find(c.node), {}};
    for (const auto& v : c.pods) {
      // The cache keeps only pods that hold devices: a victim it does not know holds none, and
      // stays a victim (the in-tree fit may need it gone).
      VictimInfo info;
      info.uid = v.uid;
      info.holdsGpus = false;
      std::optional<PodInfo> known = v.pod;
      if (!known) known = cluster_->podByUid(v.uid);
      if (known) {
        info.holdsGpus = holdsDevices(*known);
        info.priority = known->priority;
        info.priorityKnown = true;
        info.ranSeconds = ranSeconds(*known, now);
        info.requests = known->requests;
      }
      if (info.holdsGpus) {
        candidate.victims.push_back(v.uid);
        candidate.topPriority = std::max(candidate.topPriority, info.priority);
        candidate.work += evictionWork(info);
      }
      victims.push_back(std::move(info));
    }
    addOtherVictims(args->pod, c.node, *cluster_, now, victims);
    victimsOf.push_back(std::move(victims));
    candidates.push_back(std::move(candidate));
  }
  // A pod group member: only where its whole group can land, anchored where the members answered
  // before it go.
  const PodGroupRef* groupRef = compiled.groupRef();
  const std::vector<AnsweredMember> answered =
      groupRef != nullptr ? preemptions_->recall(groupRef->key) : std::vector<AnsweredMember>{};
  const std::optional<std::vector<GroupPreempt>> group =
      groupPreemption(args->pod, demand, groupRef, *snapshot, cluster_, candidates, answered);
  std::vector<wire::MetaVictims> out;
  for (std::size_t i = 0; i < args->candidates.size(); ++i) {
    const auto& c = args->candidates[i];
    const NodeState* state = candidates[i].state;
    if (state == nullptr) {
      logVeto(args->pod, c.node, "node not in the extender's cache");
      continue;
    }
    const GroupPreempt verdict = group ? (*group)[i] : GroupPreempt::kJudge;
    if (verdict == GroupPreempt::kDrop) {
      logVeto(args->pod, c.node, "its pod group cannot land whole with these victims gone");
      continue;
    }
    const std::vector<VictimInfo>& victims = victimsOf[i];
    if (verdict == GroupPreempt::kHeld) {
      // Its group holds GPUs here for it: only the victims without GPUs can matter.
      wire::MetaVictims kept{c.node, {}, c.numPdbViolations};
      for (const VictimInfo& v : victims) {
        if (v.proposed && !v.holdsGpus) kept.podUids.push_back(v.uid);
      }
      out.push_back(std::move(kept));
      continue;
    }
    VictimPlan plan = planVictims(demand, victims, *state, policy);
    if (!plan.helps()) {
      logVeto(args->pod, c.node, fitReasonText(plan.withAllGone, demand));
      continue;
    }
    out.push_back(wire::MetaVictims{c.node, std::move(plan.victims), c.numPdbViolations});
  }
  // kube-scheduler nominates the member for one of the nodes kept (all in its group's domain);
  // until the watch brings that, the next member's preempt anchors to it from here.
  if (group && !out.empty() && !args->pod.uid.empty()) {
    preemptions_->remember(groupRef->key, args->pod.uid, out.front().node);
  }
  return Reply{200, wire::writePreemptionResult(out)};
}

}  // namespace gte
