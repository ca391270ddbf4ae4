#pragma once
// The parts of a v1.Pod the extender decides on, with the effective resource requests computed by
// the Kubernetes rule (k8s.io/component-helpers/resource PodRequests).
#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"
#include "model/resource_list.h"
#include "model/string_map.h"

namespace gte {

struct PodInfo {
  std::string name;
  std::string ns;  // metadata.namespace
  std::string uid;
  std::string resourceVersion;
  std::string nodeName;           // spec.nodeName (empty while pending)
  std::string nominatedNodeName;  // status.nominatedNodeName
  std::string phase;              // status.phase
  std::int64_t priority = 0;      // spec.priority
  bool deleting = false;          // metadata.deletionTimestamp is set
  StringMap annotations;          // metadata.annotations
  StringMap labels;               // metadata.labels
  // spec.schedulingGroup.podGroupName: the Kubernetes PodGroup (scheduling.k8s.io) the pod belongs
  // to; empty when unset.
  std::string podGroupName;
  // Effective pod requests: max(sum(containers) + sidecars, each init container + sidecars started
  // before it) + overhead; for extended resources a missing request defaults to the limit.
  ResourceList requests;

  bool terminal() const noexcept { return phase == "Succeeded" || phase == "Failed"; }
};

// Parses one v1.Pod JSON object (as kube-scheduler or the API server sends it).
Result<PodInfo> parsePodJson(std::string_view json);

}  // namespace gte
