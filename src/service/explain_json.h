#pragma once
// The explain answer as JSON. Field names are a stable interface (docs/api.md, "Explain"): tools
// and the `explain` command read them, so fields are only ever added, never renamed.
#include <string>
#include <string_view>

#include "base/result.h"
#include "core/pod_demand.h"
#include "json/json_writer.h"
#include "model/pod_info.h"
#include "policy/policy.h"
#include "service/explain_nodes.h"
#include "service/placement_recorder.h"
#include "topology/gpu_topology.h"

namespace gte {

// `mode`: "nodes" (full Node objects in the request), "nodeNames" (names resolved in the cluster
// cache) or "cluster" (every node of the cluster cache, for a pod looked up by name).
// `placement`: what placement regret kept for the pod (explain by name), written as "placement";
// null when there is none.
std::string writeExplanation(const PodInfo& pod, const Result<PodDemand>& demand,
                             std::string_view mode, const Policy& policy,
                             const Explanation& explanation,
                             const PlacementRecord* placement = nullptr);

std::string_view verdictName(Verdict verdict) noexcept;

// The pieces other answers about pods and nodes share (the what-if's, the nodes listing): the
// pod's demand as `pod.demand` reads, a GPU set as an ascending index array, and the node's
// `topology` value (known, linksUnknown, unknown, malformed; unresolved for a null state).
void writePodDemand(json::JsonWriter& w, const PodDemand& demand);
void writeGpuList(json::JsonWriter& w, GpuMask gpus);
std::string_view topologyName(const NodeState* state);

}  // namespace gte
