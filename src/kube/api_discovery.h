#pragma once
// Whether the API server serves a resource, asked the way kubectl's discovery asks:
// GET /apis/GROUP/VERSION (/api/v1 for the core group) answers an APIResourceList naming the
// group version's resources, or 404 when the server does not serve that group version (an API
// not enabled by --runtime-config, a CustomResourceDefinition not installed). A watch of a
// resource that is not served would fail forever; optional watches ask this first.
//
//   auto served = kube::servesResource(transport, {"scheduling.k8s.io", "v1beta1", "podgroups"});
//   if (!served) retry later; else if (*served) start the watch.
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "kube/api_transport.h"
#include "kube/resource_path.h"

namespace gte::kube {

// The names in an APIResourceList's `resources` (subresources included: "podgroups/status").
// Errors name what did not read.
Result<std::vector<std::string>> parseApiResourceNames(std::string_view json);

// "/apis/GROUP/VERSION", or "/api/v1" for the core group.
std::string groupVersionPath(const ResourceType& type);

// true: served; false: the group version is not (404) or does not list the resource. Errors:
// kUnavailable (no answer, or HTTP 5xx: ask again soon), kFailedPrecondition (another HTTP
// status), kInvalidArgument (the answer is not an APIResourceList).
Result<bool> servesResource(ApiTransport& transport, const ResourceType& type);

}  // namespace gte::kube
