#include "kube/endpoint_slice.h"

#include "json/json_writer.h"
#include "kube/api_status.h"

namespace gte::kube {
namespace {

// Who manages the slice: not the EndpointSlice controller (the Service has no selector, so it
// leaves the slice alone either way), named so `kubectl get endpointslices` says who wrote it.
constexpr const char* kManagedBy = "gpu-topology-extender";

// Everything but the name: the labels, the address type, the endpoint and the ports.
void writeContent(json::JsonWriter& w, const ServiceEndpoint& e, bool withName) {
  w.key("metadata").beginObject();
  if (withName) w.key("name").string(e.slice).key("namespace").string(e.ns);
  w.key("labels").beginObject();
  w.key("kubernetes.io/service-name").string(e.service);
  w.key("endpointslice.kubernetes.io/managed-by").string(kManagedBy);
  w.endObject().endObject();
  w.key("addressType").string(e.address.find(':') != std::string::npos ? "IPv6" : "IPv4");
  w.key("endpoints").beginArray().beginObject();
  w.key("addresses").beginArray().string(e.address).endArray();
  w.key("conditions").beginObject();
  w.key("ready").boolean(true).key("serving").boolean(true).key("terminating").boolean(false);
  w.endObject();
  if (!e.nodeName.empty()) w.key("nodeName").string(e.nodeName);
  if (!e.pod.empty()) {
    w.key("targetRef").beginObject().key("kind").string("Pod");
    w.key("namespace").string(e.ns).key("name").string(e.pod).endObject();
  }
  w.endObject().endArray();
  w.key("ports").beginArray();
  for (const EndpointPort& p : e.ports) {
    w.element().beginObject().key("name").string(p.name).key("port").integer(p.port);
    w.key("protocol").string("TCP").endObject();
  }
  w.endArray();
}

}  // namespace

std::string endpointSliceJson(const ServiceEndpoint& endpoint) {
  std::string out;
  json::JsonWriter w(out);
  w.beginObject().key("apiVersion").string("discovery.k8s.io/v1");
  w.key("kind").string("EndpointSlice");
  writeContent(w, endpoint, true);
  w.endObject();
  return out;
}

std::string endpointSlicePatch(const ServiceEndpoint& endpoint) {
  std::string out;
  json::JsonWriter w(out);
  w.beginObject();
  writeContent(w, endpoint, false);
  w.endObject();
  return out;
}

Status publishEndpoint(ApiTransport& transport, const ServiceEndpoint& endpoint) {
  const std::string where = "endpointslice " + endpoint.ns + "/" + endpoint.slice;
  // Twice at most: a slice created by someone else between our 404 and our POST is patched.
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto patched = transport.send("PATCH", objectPath(kEndpointSlices, endpoint.ns, endpoint.slice),
                                  endpointSlicePatch(endpoint), "application/merge-patch+json");
    if (!patched) return std::move(patched).error();
    if (patched->success()) return Ok{};
    if (patched->status != 404) return statusError("patch " + where, *patched);
    auto created = transport.send("POST", collectionPath(kEndpointSlices, endpoint.ns),
                                  endpointSliceJson(endpoint));
    if (!created) return std::move(created).error();
    if (created->success()) return Ok{};
    if (created->status != 409) return statusError("create " + where, *created);
  }
  return Error{ErrorCode::kUnavailable, where + ": created and deleted concurrently; try again"};
}

}  // namespace gte::kube
