#pragma once
// The endpoint of a Service without a selector, written by the process it points at: an
// EndpointSlice labelled kubernetes.io/service-name, holding one endpoint, this process's address.
// The leader of an election publishes itself this way, so the Service routes to exactly the
// leader whatever the readiness of the other replicas (they stay Ready for rollouts).
//
// publishEndpoint sends a JSON merge patch (the arrays are replaced whole, so the slice ends up
// with exactly this endpoint), and creates the slice when there is none; repeating it is cheap,
// since the API server writes nothing for a patch that changes nothing.
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "kube/api_transport.h"
#include "kube/resource_path.h"

namespace gte::kube {

inline constexpr ResourceType kEndpointSlices{"discovery.k8s.io", "v1", "endpointslices"};

struct EndpointPort {
  std::string name;  // the Service port's name ("http")
  std::uint16_t port = 0;
};

struct ServiceEndpoint {
  std::string ns;
  std::string slice;     // the EndpointSlice's name
  std::string service;   // the Service it serves (label kubernetes.io/service-name)
  std::string address;   // an IPv4 or IPv6 address (the pod's IP); IPv6 when it holds a ':'
  std::string pod;       // the Pod it is (targetRef); empty: none
  std::string nodeName;  // the node it runs on; empty: none
  std::vector<EndpointPort> ports;
};

// The full EndpointSlice (create body) and the merge patch (update body).
std::string endpointSliceJson(const ServiceEndpoint& endpoint);
std::string endpointSlicePatch(const ServiceEndpoint& endpoint);

// Makes the slice hold exactly `endpoint`: PATCH, or POST when it does not exist yet.
Status publishEndpoint(ApiTransport& transport, const ServiceEndpoint& endpoint);

}  // namespace gte::kube
