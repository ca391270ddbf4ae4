// The EndpointSlice a leader writes itself into: the exact create body and merge patch, and
// publishEndpoint's patch, create-when-missing and create-raced paths against a scripted server.
#include "kube/endpoint_slice.h"

#include <catch2/catch_test_macros.hpp>

#include "kube/fake_transport.h"

using namespace gte::kube;
using gte::testing::FakeTransport;
using gte::testing::RecordedRequest;

namespace {

ServiceEndpoint leader() {
  ServiceEndpoint e;
  e.ns = "gpu-system";
  e.slice = "gte-gpu-topology-extender-leader";
  e.service = "gte-gpu-topology-extender";
  e.address = "10.244.1.7";
  e.pod = "gte-gpu-topology-extender-6d9f-xk2lp";
  e.nodeName = "cpu-node-3";
  e.ports = {{"http", 8888}, {"metrics", 9090}};
  return e;
}

constexpr const char* kSlicePath =
    "/apis/discovery.k8s.io/v1/namespaces/gpu-system/endpointslices/"
    "gte-gpu-topology-extender-leader";

}  // namespace

TEST_CASE("the leader's EndpointSlice: one ready endpoint, the Service's label, the ports") {
  CHECK(endpointSliceJson(leader()) ==
        R"({"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice","metadata":{"name":)"
        R"("gte-gpu-topology-extender-leader","namespace":"gpu-system","labels":{)"
        R"("kubernetes.io/service-name":"gte-gpu-topology-extender",)"
        R"("endpointslice.kubernetes.io/managed-by":"gpu-topology-extender"}},)"
        R"("addressType":"IPv4","endpoints":[{"addresses":["10.244.1.7"],"conditions":{)"
        R"("ready":true,"serving":true,"terminating":false},"nodeName":"cpu-node-3",)"
        R"("targetRef":{"kind":"Pod","namespace":"gpu-system",)"
        R"("name":"gte-gpu-topology-extender-6d9f-xk2lp"}}],"ports":[{"name":"http",)"
        R"("port":8888,"protocol":"TCP"},{"name":"metrics","port":9090,"protocol":"TCP"}]})");
  // The patch replaces the endpoint and ports (JSON merge patch replaces arrays whole).
  CHECK(endpointSlicePatch(leader()).starts_with(R"({"metadata":{"labels":{)"));
  ServiceEndpoint v6 = leader();
  v6.address = "fd00::7";
  v6.pod.clear();
  v6.nodeName.clear();
  const std::string json = endpointSliceJson(v6);
  CHECK(json.find(R"("addressType":"IPv6")") != std::string::npos);
  CHECK(json.find("targetRef") == std::string::npos);
  CHECK(json.find("nodeName") == std::string::npos);
}

TEST_CASE(
    "publishEndpoint patches the slice, creates it when missing, and patches one created "
    "meanwhile") {
  FakeTransport t;
  int patches = 0;
  int creates = 0;
  SECTION("the slice exists: one merge patch") {
    t.onSend = [&](const RecordedRequest& r) -> gte::Result<HttpResponse> {
      REQUIRE(r.method == "PATCH");
      CHECK(r.path == kSlicePath);
      CHECK(r.contentType == "application/merge-patch+json");
      ++patches;
      return HttpResponse{200, "{}"};
    };
    REQUIRE(publishEndpoint(t, leader()).ok());
    CHECK(patches == 1);
  }
  SECTION("no slice yet: patch answers 404, then a create") {
    t.onSend = [&](const RecordedRequest& r) -> gte::Result<HttpResponse> {
      if (r.method == "PATCH") {
        ++patches;
        return HttpResponse{404, "{}"};
      }
      CHECK(r.path == "/apis/discovery.k8s.io/v1/namespaces/gpu-system/endpointslices");
      CHECK(r.body == endpointSliceJson(leader()));
      ++creates;
      return HttpResponse{201, "{}"};
    };
    REQUIRE(publishEndpoint(t, leader()).ok());
    CHECK(patches == 1);
    CHECK(creates == 1);
  }
  SECTION("created by someone else between the 404 and the create: patched after all") {
    t.onSend = [&](const RecordedRequest& r) -> gte::Result<HttpResponse> {
      if (r.method == "PATCH") return HttpResponse{++patches == 1 ? 404 : 200, "{}"};
      ++creates;
      return HttpResponse{409, R"({"kind":"Status","reason":"AlreadyExists"})"};
    };
    REQUIRE(publishEndpoint(t, leader()).ok());
    CHECK(patches == 2);
    CHECK(creates == 1);
  }
  SECTION("refused by RBAC: the error names the slice and the server's words") {
    t.onSend = [&](const RecordedRequest&) -> gte::Result<HttpResponse> {
      return HttpResponse{403, R"({"kind":"Status","message":"endpointslices is forbidden"})"};
    };
    auto published = publishEndpoint(t, leader());
    REQUIRE_FALSE(published.ok());
    CHECK(published.error().message.find("gte-gpu-topology-extender-leader") != std::string::npos);
    CHECK(published.error().message.find("forbidden") != std::string::npos);
  }
}
