#pragma once
// The explain answer as JSON. Field names are a stable interface (docs/api.md, "Explain"): tools
// and the `explain` command read them, so fields are only ever added, never renamed.
#include <chrono>
#include <span>
#include <string>
#include <string_view>

#include "base/result.h"
#include "core/pod_demand.h"
#include "json/json_writer.h"
#include "model/pod_info.h"
#include "policy/policy.h"
#include "service/bound_pod.h"
#include "service/explain_nodes.h"
#include "service/group_requests.h"
#include "service/placement_recorder.h"
#include "topology/gpu_topology.h"

namespace gte {

// What explain shows of a pod besides its nodes.
struct ExplainExtras {
  // The pod's group, written as "group" (null or without a ref: "group": null); `domainNames`
  // names its plan's domains; `now` is the clock behind a hold's remaining time.
  const GroupDecision* group = nullptr;
  const GroupDomainNames* domainNames = nullptr;
  std::chrono::system_clock::time_point now;
  // What placement regret kept for the pod (explain by name), written as "placement"; null when
  // there is none.
  const PlacementRecord* placement = nullptr;
  // Where the pod is bound or reserved (explain by name), written as "pod.boundTo"; null: pending.
  const BoundPod* bound = nullptr;
};

// `mode`: "nodes" (full Node objects in the request), "nodeNames" (names resolved in the cluster
// cache) or "cluster" (every node of the cluster cache, for a pod looked up by name).
std::string writeExplanation(const PodInfo& pod, const Result<PodDemand>& demand,
                             std::string_view mode, const Policy& policy,
                             const Explanation& explanation, const ExplainExtras& extras = {});

std::string_view verdictName(Verdict verdict) noexcept;

// The pieces other answers about pods and nodes share (the what-if's, the nodes listing): the
// pod's demand as `pod.demand` reads, a GPU set as an ascending index array, and the node's
// `topology` value (known, linksUnknown, unknown, malformed; unresolved for a null state).
void writePodDemand(json::JsonWriter& w, const PodDemand& demand);
// A level's domain by id: its name, or null (no domain, several, or no names).
void writeDomainName(json::JsonWriter& w, const GroupDomainNames* names, std::size_t level,
                     std::uint32_t id);
// A group's levels: [{"label", "mode"}].
void writeGroupLevels(json::JsonWriter& w, std::span<const GroupLevel> levels);
// A plan's place, as members of the open object: "level" (the label of the level whose domain
// holds it, or null) and "domains" (per level, the domain every member shares, or null).
void writePlanLevel(json::JsonWriter& w, const GroupPlan& plan, std::span<const GroupLevel> levels,
                    const GroupDomainNames* names);
// The planner's verdict on every domain it looked at (explain's `group.domains`, the group
// what-if's): [{"level", "domain", "slots", "needed", "verdict"}]; [] for a null plan.
void writeDomainVerdicts(json::JsonWriter& w, const GroupPlan* plan,
                         std::span<const GroupLevel> levels, const GroupDomainNames* names);
void writeGpuList(json::JsonWriter& w, GpuMask gpus);
std::string_view topologyName(const NodeState* state);
// How the device plugin shares the node's GPUs (docs/sharing.md): {"strategy", "replicas",
// "unreadable", "tenants": [per GPU]}, or null when they are whole (or the node is unresolved).
void writeGpuSharing(json::JsonWriter& w, const NodeState* state);

}  // namespace gte
