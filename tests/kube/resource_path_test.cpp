// API paths of core and group resources, namespaced and cluster-wide.
#include "kube/resource_path.h"

#include <catch2/catch_test_macros.hpp>

using namespace gte::kube;

TEST_CASE("Resource paths: the core group under /api, the others under /apis/GROUP") {
  const ResourceType leases{"coordination.k8s.io", "v1", "leases"};
  const ResourceType slices{"resource.k8s.io", "v1", "resourceslices"};
  CHECK(collectionPath(kPods) == "/api/v1/pods");
  CHECK(collectionPath(kPods, "ml") == "/api/v1/namespaces/ml/pods");
  CHECK(collectionPath(slices) == "/apis/resource.k8s.io/v1/resourceslices");
  CHECK(objectPath(kNodes, "", "gpu-a.example") == "/api/v1/nodes/gpu-a.example");
  CHECK(objectPath(kPods, "ml", "train-0", "binding") ==
        "/api/v1/namespaces/ml/pods/train-0/binding");
  CHECK(objectPath(leases, "kube-system", "gte") ==
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/gte");
}

TEST_CASE("Resource paths: a namespace or name cannot change the path's shape") {
  CHECK(objectPath(kPods, "a/b", "..") == "/api/v1/namespaces/a%2Fb/pods/..");
  CHECK(objectPath(kNodes, "", "n?watch=1") == "/api/v1/nodes/n%3Fwatch%3D1");
}
