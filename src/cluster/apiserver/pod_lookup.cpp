#include "cluster/apiserver/pod_lookup.h"

#include "kube/object_name.h"
#include "kube/resource_path.h"

namespace gte::cluster {

Result<PodInfo> getPod(kube::ApiTransport& transport, const std::string& ns,
                       const std::string& name) {
  const std::string pod = ns + "/" + name;
  if (!kube::isDns1123Label(ns) || !kube::isDns1123Subdomain(name)) {
    return Error{ErrorCode::kInvalidArgument, "not a valid NAMESPACE/NAME: \"" + pod + "\""};
  }
  auto response = transport.send("GET", kube::objectPath(kube::kPods, ns, name));
  if (!response) return std::move(response).error();
  if (response->status == 404) {
    return Error{ErrorCode::kNotFound, "pod " + pod + " not found"};
  }
  if (!response->success()) {
    constexpr std::size_t kMaxBody = 300;
    const ErrorCode code =
        response->status >= 500 ? ErrorCode::kUnavailable : ErrorCode::kFailedPrecondition;
    return Error{code, "get pod " + pod + ": HTTP " + std::to_string(response->status) + ": " +
                           response->body.substr(0, kMaxBody)};
  }
  auto parsed = parsePodJson(response->body);
  if (!parsed) {
    return Error{ErrorCode::kInternal,
                 "pod " + pod + " from the API server: " + parsed.error().message};
  }
  return parsed;
}

}  // namespace gte::cluster
