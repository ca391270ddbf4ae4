#pragma once
// The parts of a v1.Pod the extender decides on, with the effective resource requests computed by
// the Kubernetes rule (k8s.io/component-helpers/resource PodRequests).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/resource_list.h"
#include "model/string_map.h"

namespace gte {
namespace json {
class JsonReader;
}

// One entry of spec.resourceClaims: the claim by name, or the template its claim is made from.
struct PodResourceClaim {
  std::string name;
  std::string resourceClaimName;
  std::string resourceClaimTemplateName;
  friend bool operator==(const PodResourceClaim&, const PodResourceClaim&) = default;
};

// One entry of status.resourceClaimStatuses: the claim made for a template entry (empty when
// none was needed).
struct PodResourceClaimStatus {
  std::string name;
  std::string resourceClaimName;
  friend bool operator==(const PodResourceClaimStatus&, const PodResourceClaimStatus&) = default;
};

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
  // The most nvidia.com/gpu (or nvidia.com/gpu.shared) any one container or init container asks:
  // the kubelet sends each container's devices to the device plugin's Allocate on their own, and
  // a plugin that admits one replica per request judges each container (docs/sharing.md). -1 when
  // not known (a pod built without its containers): the pod's whole request stands for it.
  std::int64_t largestContainerGpus = -1;
  // Dynamic Resource Allocation (docs/dra.md): the claims the pod references, the claims made for
  // its templates, and the claim the scheduler made for its DRA-backed extended resources
  // (status.extendedResourceClaimStatus.resourceClaimName; set after a bind).
  std::vector<PodResourceClaim> resourceClaims;
  std::vector<PodResourceClaimStatus> resourceClaimStatuses;
  std::string extendedResourceClaimName;
  // When it was bound, in unix seconds: the lastTransitionTime of its PodScheduled condition when
  // True (the API server sets it when the Binding is created), else metadata.creationTimestamp (a
  // pod created with spec.nodeName set, e.g. by a DaemonSet controller, is bound from birth).
  // nullopt when neither is there, or one of those fields has a JSON type no API server writes.
  std::optional<std::int64_t> boundAt;

  bool terminal() const noexcept { return phase == "Succeeded" || phase == "Failed"; }
};

// Parses one v1.Pod JSON object (as kube-scheduler or the API server sends it).
Result<PodInfo> parsePodJson(std::string_view json);

// The same for the object at `reader`, which it reads to the object's end and no further (the
// caller checks what follows): a watch event's pod is read in the same pass as the event.
Result<PodInfo> readPodJson(json::JsonReader& reader);

}  // namespace gte
