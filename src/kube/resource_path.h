#pragma once
// API paths of Kubernetes resources: /api/v1/... for the core group, /apis/GROUP/VERSION/... for
// the others, namespaced or cluster-wide. Namespaces and names are percent-encoded as path
// segments, so a path never changes shape whatever they hold.
//
//   collectionPath(kPods)                          /api/v1/pods
//   objectPath(kPods, "ml", "train", "binding")    /api/v1/namespaces/ml/pods/train/binding
//   objectPath({"coordination.k8s.io", "v1", "leases"}, "kube-system", "gte")
//                                                  /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/gte
#include <string>
#include <string_view>

namespace gte::kube {

struct ResourceType {
  std::string_view group;     // "" for the core group
  std::string_view version;   // "v1"
  std::string_view resource;  // the plural: "pods", "leases", "resourceslices"
};

inline constexpr ResourceType kNodes{"", "v1", "nodes"};
inline constexpr ResourceType kPods{"", "v1", "pods"};
inline constexpr ResourceType kResourceSlices{"resource.k8s.io", "v1", "resourceslices"};
inline constexpr ResourceType kDeviceClasses{"resource.k8s.io", "v1", "deviceclasses"};
inline constexpr ResourceType kResourceClaims{"resource.k8s.io", "v1", "resourceclaims"};
inline constexpr ResourceType kDeviceTaintRules{"resource.k8s.io", "v1", "devicetaintrules"};

// The collection in every namespace (or of a cluster-scoped resource) when `ns` is empty, else in
// namespace `ns`.
std::string collectionPath(const ResourceType& type, std::string_view ns = {});

// One object; cluster-scoped when `ns` is empty. A non-empty `subresource` ("binding", "status")
// is appended.
std::string objectPath(const ResourceType& type, std::string_view ns, std::string_view name,
                       std::string_view subresource = {});

}  // namespace gte::kube
