#include "service/whatif.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "core/claims_as_gpus.h"
#include "core/compiled_pod.h"
#include "core/node_decider.h"
#include "group/pod_group.h"
#include "policy/policy_yaml.h"
#include "sim/live_group_plan.h"

namespace gte {
namespace {

Result<PolicyConstSharedPtr> proposedPolicy(const std::string& yaml, const Policy& running) {
  auto parsed = parsePolicyYaml(yaml);
  if (!parsed) {
    const std::string& why = parsed.error().message;
    return invalidArgument(why.starts_with("policy: ") ? why : "policy: " + why);
  }
  // The snapshot's node states were read from labels under the running policy; a policy that
  // reads labels differently cannot be tried on them.
  if (parsed->labelPrefix != running.labelPrefix) {
    return invalidArgument("policy: labelPrefix '" + parsed->labelPrefix +
                           "' differs from the running policy's '" + running.labelPrefix +
                           "'; the cluster's labels were read with the running one, so a "
                           "what-if can compare scoring, not how labels are read");
  }
  if (parsed->migProducts != running.migProducts) {
    return invalidArgument(
        "policy: mig.products differ from the running policy's; the cluster's MIG labels were "
        "read with the running one, so a what-if can compare scoring, not how labels are read");
  }
  return std::make_shared<const Policy>(std::move(*parsed));
}

std::string copyName(const std::string& base, std::int64_t i, std::int64_t count) {
  const std::string name = base.empty() ? "whatif" : base;
  return count == 1 ? name : name + "-" + std::to_string(i + 1);
}

// The pods as the replay under `run`'s policy takes them; sets the run's demand and the levels a
// group of the pod is planned by (the pod's own `<prefix>group-levels` modes when it names a
// group, else the policy's). `dra`: the snapshot's DRA objects (with --dra), which the pod's claims
// and DRA-backed nvidia.com/gpu resolve against as filter resolves them.
Result<std::vector<sim::ReplayPod>> podsUnder(const WhatifRequest& request,
                                              const dra::DraObjects* dra,
                                              const GroupSizeLookup* sizes, WhatifPolicyRun& run) {
  const Policy& policy = *run.policy;
  std::vector<sim::ReplayPod> pods;
  if (!request.pod) {
    pods.reserve(request.csvPods.size());
    for (const sim::SimPod& row : request.csvPods) {
      sim::ReplayPod pod;
      pod.pod = sim::SimPod(row.name, 0, 0, row.gpus);  // CPU and memory are not modelled
      pod.demand = sim::simPodDemand(pod.pod, policy);
      pods.push_back(std::move(pod));
    }
    return pods;
  }
  // Compiled as filter compiles it: a pod filter refuses on every node (an invalid resource,
  // annotation or group annotation) is refused here with filter's message.
  const CompiledPod compiled = compilePod(*request.pod, policy, dra, sizes);
  if (const Error* error = compiled.ownError()) return invalidArgument("pod: " + error->message);
  const Result<PodDemand>& demand = compiled.demand;
  if (demand->empty()) {
    return invalidArgument(
        "pod: asks for no GPU or MIG devices (nvidia.com/gpu, nvidia.com/mig-*) and no "
        "ResourceClaims; kube-scheduler does not ask the extender about such a pod");
  }
  if (demand->dra && demand->dra->passedThrough()) {
    return invalidArgument("pod: its DRA demand is passed through (" + demand->dra->passThrough +
                           "): the extender makes no prediction for it");
  }
  const std::int64_t count = request.groupSize.value_or(request.count);
  // Successive copies see the earlier ones' whole GPUs taken through the node states (for claims
  // too: rebuildNodeState takes them from the DRA devices); the MIG devices other claims may take
  // are not carried from copy to copy, so such a pod is placed once.
  if (count > 1 && demand->draClaims() && !claimsAsGpus(*demand)) {
    return invalidArgument(
        "pod: its ResourceClaims are not N GPUs of one class (selectors, constraints or "
        "firstAvailable): a what-if places one such pod (count 1), not several");
  }
  run.demand = *demand;
  run.levels = compiled.grouped() ? compiled.groupRef()->levels : policy.groups.levels;
  if (compiled.grouped()) run.sameModel = compiled.groupRef()->sameModel;
  pods.reserve(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    sim::ReplayPod pod;
    pod.pod = sim::SimPod(copyName(request.pod->name, i, count), 0, 0,
                          static_cast<int>(std::min<std::int64_t>(demand->gpus, 1 << 20)));
    pod.demand = *demand;
    pods.push_back(std::move(pod));
  }
  return pods;
}

// A group what-if under `policy` compares modes and scoring, not level labels: the snapshot's
// domain ids were interned under the running policy's.
Status sameLevelLabels(const Policy& policy, const Policy& running) {
  const auto labels = [](const std::vector<GroupLevel>& of) {
    std::vector<std::string> out;
    for (const GroupLevel& level : of)
      out.push_back(level.label);
    return out;
  };
  if (labels(policy.groups.levels) != labels(running.groups.levels)) {
    return invalidArgument(
        "policy: groups.levels name other labels than the running policy's; the cluster's "
        "domains were read with the running ones, so a group what-if can compare modes and "
        "scoring, not other levels");
  }
  return Ok{};
}

// The request's group placed by the planner under `run`'s policy and levels: the run's steps are
// its members. A group the planner leaves to per-pod placement (no domain holds it, or MIG or
// non-GPU claim members) is placed as the extender would then place it: pod by pod.
void planGroupRun(const WhatifRequest& request, const WhatifOutcome& outcome,
                  const std::vector<GroupDomainIds>& domains, std::span<const sim::ReplayPod> pods,
                  WhatifPolicyRun& run, const std::function<bool()>& keepGoing) {
  std::vector<PodDemand> members;
  members.reserve(pods.size());
  for (const sim::ReplayPod& pod : pods)
    members.push_back(pod.demand);
  const std::string group =
      request.pod->ns + "/" + (request.pod->name.empty() ? "whatif" : request.pod->name);
  sim::LiveGroupPlanInput input;
  input.nodes = outcome.nodes;
  input.domains = domains;
  input.domainNames = outcome.snapshot->groupDomains.get();
  input.group = group;
  input.levels = run.levels;
  input.sameModel = run.sameModel;
  input.members = members;
  input.rebuild = run.policy != outcome.snapshot->policy;
  sim::LiveGroupPlan planned = sim::planGroupOnLiveStates(input, *run.policy);
  const bool perPod = planned.plan.status == GroupPlanStatus::kUnplaced ||
                      planned.plan.status == GroupPlanStatus::kUnsupported;
  if (perPod) {
    run.replay =
        sim::replayOnLiveStates(outcome.nodes, pods, *run.policy, input.rebuild, keepGoing);
  } else {
    run.replay.clusterBefore = planned.clusterBefore;
    run.replay.steps = std::move(planned.steps);
  }
  run.group = std::move(planned.plan);
}

// Filter's refusals of `demand` on every node as it is now, most nodes first; empty when some node
// fits it.
std::string refusalsNow(const PodDemand& demand, std::span<const sim::LiveNode> nodes,
                        const Policy& policy) {
  const NodeDecider decider(demand, policy);
  std::map<std::string, std::size_t> counts;
  for (const sim::LiveNode& node : nodes) {
    const FitOutcome fit =
        decider
            .decide(NodeCandidate{node.name, node.state.get(), {}, nullptr}, DecisionPart::kVerdict)
            .fit;
    if (fit.fits()) return {};
    ++counts[fitReasonText(fit, demand)];
  }
  std::vector<std::pair<std::size_t, std::string>> sorted;
  for (auto& [text, n] : counts)
    sorted.emplace_back(n, text);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out;
  for (const auto& [n, text] : sorted) {
    if (!out.empty()) out.append("; ");
    out.append(text).append(" (").append(std::to_string(n)).append(n == 1 ? " node)" : " nodes)");
  }
  return out;
}

}  // namespace

Result<WhatifOutcome> runWhatif(const WhatifRequest& request,
                                ClusterSnapshotConstSharedPtr snapshot,
                                const std::function<bool()>& keepGoing,
                                const GroupSizeLookup* sizes) {
  WhatifOutcome out;
  out.csv = !request.pod.has_value();
  const PolicyConstSharedPtr running = snapshot->policy;
  std::vector<std::pair<std::string, PolicyConstSharedPtr>> policies = {{"running", running}};
  if (request.policyYaml) {
    auto proposed = proposedPolicy(*request.policyYaml, *running);
    if (!proposed) return std::move(proposed).error();
    policies.emplace_back("proposed", std::move(*proposed));
  }
  // Every pod is checked under every policy before anything is placed.
  std::vector<std::vector<sim::ReplayPod>> podsPerPolicy;
  for (auto& [name, policy] : policies) {
    WhatifPolicyRun run;
    run.name = name;
    run.policy = policy;
    auto pods = podsUnder(request, snapshot->dra.get(), sizes, run);
    if (!pods) return std::move(pods).error();
    podsPerPolicy.push_back(std::move(*pods));
    out.runs.push_back(std::move(run));
  }
  out.nodes.reserve(snapshot->nodes.size());
  snapshot->nodes.forEach([&out](const std::string& name, const NodeStateConstSharedPtr& state) {
    out.nodes.push_back({name, state});
  });
  std::sort(out.nodes.begin(), out.nodes.end(),
            [](const sim::LiveNode& a, const sim::LiveNode& b) { return a.name < b.name; });
  out.snapshot = std::move(snapshot);
  if (request.groupSize) {
    out.groupSize = request.groupSize;
    std::vector<GroupDomainIds> domains;
    domains.reserve(out.nodes.size());
    for (const sim::LiveNode& node : out.nodes) {
      const NodeGroupFacts* facts = out.snapshot->nodes.groupFacts(node.name);
      domains.push_back(facts != nullptr
                            ? facts->domain
                            : GroupDomainIds{kNoDomain, kNoDomain, kNoDomain, kNoDomain});
    }
    for (const WhatifPolicyRun& run : out.runs) {
      auto same = sameLevelLabels(*run.policy, *running);
      if (!same) return std::move(same).error();
    }
    for (std::size_t i = 0; i < out.runs.size(); ++i) {
      // The planner runs once per policy, whole: the deadline is checked between the runs.
      if (!keepGoing()) {
        out.stopped = true;
        break;
      }
      planGroupRun(request, out, domains, podsPerPolicy[i], out.runs[i], keepGoing);
    }
    out.stopped = out.stopped || !keepGoing();
    out.pods = std::move(podsPerPolicy.front());
    return out;
  }
  for (std::size_t i = 0; i < out.runs.size(); ++i) {
    WhatifPolicyRun& run = out.runs[i];
    run.replay = sim::replayOnLiveStates(out.nodes, podsPerPolicy[i], *run.policy,
                                         run.policy != running, keepGoing);
    out.stopped = out.stopped || run.replay.steps.size() < podsPerPolicy[i].size();
    run.noNodeFits.resize(run.replay.steps.size());
    // Pods of one shape share the answer: it is asked once per shape.
    std::vector<std::pair<const PodDemand*, std::string>> asked;
    for (std::size_t step = 0; step < run.replay.steps.size(); ++step) {
      const sim::ReplayStep& replayed = run.replay.steps[step];
      if (!replayed.asksForGpus || replayed.placement.node >= 0) continue;
      const PodDemand& demand = podsPerPolicy[i][step].demand;
      const auto known = std::find_if(asked.begin(), asked.end(), [&](const auto& entry) {
        return sameShape(*entry.first, demand);
      });
      if (known == asked.end()) {
        asked.emplace_back(&demand, refusalsNow(demand, out.nodes, *run.policy));
        run.noNodeFits[step] = asked.back().second;
      } else {
        run.noNodeFits[step] = known->second;
      }
    }
  }
  out.pods = std::move(podsPerPolicy.front());
  return out;
}

}  // namespace gte
