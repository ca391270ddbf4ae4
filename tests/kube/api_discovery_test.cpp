// Discovery: which resources a group version serves, from its APIResourceList or a 404.
#include "kube/api_discovery.h"

#include <catch2/catch_test_macros.hpp>

#include "kube/fake_transport.h"

using gte::ErrorCode;
using gte::Result;
using gte::kube::groupVersionPath;
using gte::kube::HttpResponse;
using gte::kube::parseApiResourceNames;
using gte::kube::ResourceType;
using gte::kube::servesResource;
using gte::testing::FakeTransport;
using gte::testing::RecordedRequest;

namespace {

// Trimmed from kube-apiserver v1.37.2's answer with GenericWorkload on.
constexpr const char* kScheduling =
    R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"scheduling.k8s.io/v1beta1",)"
    R"("resources":[{"name":"podgroups","singularName":"podgroup","namespaced":true,)"
    R"("kind":"PodGroup","verbs":["create","delete","get","list","watch"]},)"
    R"({"name":"podgroups/status","singularName":"","namespaced":true,"kind":"PodGroup",)"
    R"("verbs":["get","patch","update"]},{"name":"workloads","namespaced":true,"kind":"Workload"}]})";

constexpr ResourceType kPodGroups{"scheduling.k8s.io", "v1beta1", "podgroups"};

}  // namespace

TEST_CASE("discovery: an APIResourceList's resource names") {
  auto names = parseApiResourceNames(kScheduling);
  REQUIRE(names.ok());
  CHECK(*names == std::vector<std::string>{"podgroups", "podgroups/status", "workloads"});
  CHECK(parseApiResourceNames(R"({"resources":[]})")->empty());
  CHECK(parseApiResourceNames(R"({"resources":null})")->empty());

  struct Bad {
    const char* body;
    const char* says;
  };
  for (const Bad& bad :
       {Bad{"", "the document"}, Bad{"[]", "the document"},
        Bad{R"({"kind":"Status"})", "no resources"}, Bad{R"({"resources":{}})", "resources"},
        Bad{R"({"resources":[{"name":7}]})", "resources[0].name"},
        Bad{R"({"resources":[]} x)", "the document"}}) {
    INFO(bad.body);
    auto parsed = parseApiResourceNames(bad.body);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.error().message.find(bad.says) != std::string::npos);
  }
}

TEST_CASE("discovery: served, not served, and asked again later") {
  CHECK(groupVersionPath(kPodGroups) == "/apis/scheduling.k8s.io/v1beta1");
  CHECK(groupVersionPath({"", "v1", "pods"}) == "/api/v1");

  FakeTransport transport;
  int status = 200;
  std::string body = kScheduling;
  transport.onSend = [&](const RecordedRequest& r) -> Result<HttpResponse> {
    CHECK(r.method == "GET");
    CHECK(r.path == "/apis/scheduling.k8s.io/v1beta1");
    return HttpResponse{status, body};
  };
  CHECK(*servesResource(transport, kPodGroups));
  CHECK_FALSE(*servesResource(transport, {"scheduling.k8s.io", "v1beta1", "compositepodgroups"}));

  status = 404;  // runtime-config leaves the group version off
  body = R"({"kind":"Status","code":404})";
  CHECK_FALSE(*servesResource(transport, kPodGroups));

  status = 503;
  CHECK(servesResource(transport, kPodGroups).error().code == ErrorCode::kUnavailable);
  status = 403;
  CHECK(servesResource(transport, kPodGroups).error().code == ErrorCode::kFailedPrecondition);
  status = 200;
  body = "<html>";
  CHECK(servesResource(transport, kPodGroups).error().code == ErrorCode::kInvalidArgument);
}
