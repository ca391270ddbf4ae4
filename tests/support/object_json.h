#pragma once
// Kubernetes objects as JSON, the way kube-scheduler and the API server send them, for tests that
// drive the service or the binary with request bodies and cluster files.
#include <string>
#include <vector>

#include "model/node_info.h"
#include "model/pod_info.h"

namespace gte::testing {

// metadata (name, labels) and status.allocatable (whole units).
std::string nodeJson(const NodeInfo& node);
// metadata (name, namespace, uid, annotations) and one container whose requests and limits are
// the pod's requests (whole units); status.phase.
std::string podJson(const PodInfo& pod);
// The ExtenderArgs kube-scheduler sends in NodeNames mode (nodeCacheCapable: true): the pod as
// podJson writes it, "Nodes": null and the names.
std::string namesArgsJson(const PodInfo& pod, const std::vector<std::string>& names);
// A v1 List of the nodes and pods, as --cluster-file reads it.
std::string clusterListJson(const std::vector<NodeInfo>& nodes, const std::vector<PodInfo>& pods);

}  // namespace gte::testing
