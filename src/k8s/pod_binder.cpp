#include "k8s/pod_binder.h"

#include "cluster/gpu_annotation.h"
#include "json/json_writer.h"
#include "k8s/cache_sinks.h"
#include "k8s/object_name.h"
#include "k8s/query_escape.h"
#include "log/logger.h"

namespace gte::k8s {
namespace {

// The names were validated (bind), and are percent-encoded as path segments all the same: a path
// is built from them and must never change shape whatever they hold.
std::string podPath(const BindRequest& request) {
  return "/api/v1/namespaces/" + queryEscape(request.podNamespace) + "/pods/" +
         queryEscape(request.podName);
}

std::string podName(const BindRequest& request) {
  return request.podNamespace + "/" + request.podName;
}

Error httpError(const std::string& what, const HttpResponse& response) {
  const ErrorCode code = response.status == 404   ? ErrorCode::kNotFound
                         : response.status >= 500 ? ErrorCode::kUnavailable
                                                  : ErrorCode::kFailedPrecondition;
  constexpr std::size_t kMaxBody = 300;
  return Error{code, what + ": HTTP " + std::to_string(response.status) + ": " +
                         response.body.substr(0, kMaxBody)};
}

}  // namespace

std::string bindingBody(const BindRequest& request, const std::string& uid) {
  std::string out;
  json::JsonWriter w(out);
  w.beginObject().key("apiVersion").string("v1").key("kind").string("Binding");
  w.key("metadata").beginObject().key("name").string(request.podName);
  w.key("namespace").string(request.podNamespace);
  // A UID precondition: the API server refuses to bind a different pod of the same name (one
  // deleted and re-created since the scheduler decided).
  if (!uid.empty()) w.key("uid").string(uid);
  w.endObject();
  w.key("target").beginObject().key("apiVersion").string("v1").key("kind").string("Node");
  w.key("name").string(request.node).endObject();
  w.endObject();
  return out;
}

std::string annotationPatch(const std::string& key, const std::string& value) {
  std::string out;
  json::JsonWriter w(out);
  w.beginObject().key("metadata").beginObject().key("annotations").beginObject();
  w.key(key).string(value).endObject().endObject().endObject();
  return out;
}

PodBinder::PodBinder(std::shared_ptr<ApiTransport> transport,
                     std::shared_ptr<cluster::ClusterState> state)
    : transport_(std::move(transport)), state_(std::move(state)) {}

Result<cluster::ObservedPod> PodBinder::fetchPod(const BindRequest& request) {
  auto response = transport_->send("GET", podPath(request));
  if (!response) return std::move(response).error();
  if (!response->success()) return httpError("get pod " + podName(request), *response);
  auto observed = observePod(response->body);
  if (!observed) {
    return Error{ErrorCode::kInternal,
                 "pod " + podName(request) + " from the API server: " + observed.error().message};
  }
  if (!request.podUid.empty() && observed->pod.uid != request.podUid) {
    return Error{ErrorCode::kFailedPrecondition, "pod " + podName(request) + " has UID " +
                                                     observed->pod.uid + ", not " + request.podUid +
                                                     " (deleted and re-created)"};
  }
  return observed;
}

Status PodBinder::createBinding(const BindRequest& request, const std::string& uid) {
  auto response =
      transport_->send("POST", podPath(request) + "/binding", bindingBody(request, uid));
  if (response && response->success()) return Ok{};
  // A lost answer or a conflict may hide a binding that did land (ours, retried): the pod decides.
  auto current = fetchPod(request);
  if (current && current->pod.nodeName == request.node) return Ok{};
  if (current && !current->pod.nodeName.empty()) {
    return Error{ErrorCode::kFailedPrecondition,
                 "pod " + podName(request) + " is already bound to node " + current->pod.nodeName};
  }
  if (!response) return std::move(response).error();
  return httpError("bind pod " + podName(request) + " to " + request.node, *response);
}

void PodBinder::annotate(const BindRequest& request, const Allocation& allocation) {
  const std::string value = cluster::formatGpuAnnotation(allocation);
  if (value.empty()) return;
  const std::string key =
      state_->snapshot()->policy->labelPrefix + std::string(cluster::kGpusAnnotation);
  auto response = transport_->send("PATCH", podPath(request), annotationPatch(key, value),
                                   "application/merge-patch+json");
  if (!response || !response->success()) {
    log::warn("bind: could not annotate the pod with its predicted GPUs",
              {{"pod", podName(request)},
               {"error", response ? std::to_string(response->status) + " " + response->body
                                  : response.error().message}});
  }
}

Status PodBinder::bind(const BindRequest& request) {
  if (!isDns1123Label(request.podNamespace)) {
    return invalidArgument("invalid pod namespace \"" + request.podNamespace.substr(0, 80) +
                           "\": not a DNS-1123 label");
  }
  if (!isDns1123Subdomain(request.podName)) {
    return invalidArgument("invalid pod name \"" + request.podName.substr(0, 80) +
                           "\": not a DNS-1123 subdomain");
  }
  auto observed = fetchPod(request);
  if (!observed) return std::move(observed).error();
  const std::string uid = observed->pod.uid;
  if (observed->pod.nodeName == request.node) {
    state_->upsertPod(std::move(*observed));  // make sure the cache counts it already
    return Ok{};
  }
  if (!observed->pod.nodeName.empty()) {
    return Error{ErrorCode::kFailedPrecondition,
                 "pod " + podName(request) + " is already bound to node " + observed->pod.nodeName};
  }
  auto reserved = state_->reserve(observed->pod, request.node);
  if (!reserved) return std::move(reserved).error();
  if (auto bound = createBinding(request, uid); !bound) {
    state_->release(uid);
    return bound;
  }
  annotate(request, *reserved);
  return Ok{};
}

}  // namespace gte::k8s
