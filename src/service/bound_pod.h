#pragma once
// Where a pod explained by name already is: the node it is bound to (or reserved on by this
// extender's bind, before the API server has bound it), the GPUs and MIG instances charged to it
// there, and the devices its ResourceClaims were allocated. Explain shows it as `pod.boundTo` and
// judges that node as if the pod were not on it, the question kube-scheduler would ask if the pod
// arrived now. Pure: reads one snapshot.
#include <optional>
#include <string>
#include <vector>

#include "core/allocation.h"
#include "model/pod_info.h"
#include "snapshot/cluster_snapshot.h"

namespace gte {

struct BoundDevice {
  std::string claim;  // the ResourceClaim's name
  std::string request;
  std::string pool;
  std::string device;
};

struct BoundPod {
  std::string node;
  bool reserved = false;  // reserved by this extender's bind; not bound by the API server yet
  bool charged = false;   // the cache holds a charge for it on `node`
  Allocation allocation;  // what the charge names (empty when it names nothing)
  std::vector<BoundDevice> devices;  // its claims' allocated devices, in claim order
};

// nullopt: the pod is pending (neither bound nor reserved).
std::optional<BoundPod> findBoundPod(const PodInfo& pod, const ClusterSnapshot& snapshot);

}  // namespace gte
