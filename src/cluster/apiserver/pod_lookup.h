#pragma once
// Reads one pod from the API server (explain of a pod by name): GET
// /api/v1/namespaces/NS/pods/NAME, with both names checked against the Kubernetes naming rules
// before they become part of the path.
#include <string>

#include "base/result.h"
#include "kube/api_transport.h"
#include "model/pod_info.h"

namespace gte::cluster {

// Errors: kInvalidArgument (not a valid namespace or pod name), kNotFound (HTTP 404),
// kUnavailable (transport failure or 5xx), kFailedPrecondition (another status, e.g. 403 when the
// service account may not get pods), kInternal (an answer that is not a pod).
Result<PodInfo> getPod(kube::ApiTransport& transport, const std::string& ns,
                       const std::string& name);

}  // namespace gte::cluster
