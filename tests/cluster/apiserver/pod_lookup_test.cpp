// Explain's pod lookup: one GET of the pod, its annotations and requests read as filter reads a
// pod; names that could change the path's shape never reach the API server.
#include "cluster/apiserver/pod_lookup.h"

#include <catch2/catch_test_macros.hpp>

#include "kube/fake_transport.h"
#include "model/gpu_request.h"

using gte::ErrorCode;
using gte::testing::FakeTransport;
using gte::testing::RecordedRequest;

namespace {

constexpr const char* kPod =
    R"({"kind":"Pod","metadata":{"name":"train","namespace":"ml","uid":"u-1",)"
    R"("annotations":{"gputopo.dev/min-link":"nvlink"}},"spec":{"containers":[{"name":"m",)"
    R"("resources":{"limits":{"nvidia.com/gpu":"4"}}}]},"status":{"phase":"Pending"}})";

}  // namespace

TEST_CASE("getPod reads the pod with one GET, annotations and requests included") {
  FakeTransport transport;
  transport.onSend = [](const RecordedRequest&) {
    return gte::Result<gte::kube::HttpResponse>(gte::kube::HttpResponse{200, kPod});
  };
  auto pod = gte::cluster::getPod(transport, "ml", "train");
  REQUIRE(pod.ok());
  CHECK(pod->uid == "u-1");
  CHECK(pod->annotations.at("gputopo.dev/min-link") == "nvlink");
  auto request = gte::gpuRequestFrom(pod->requests);
  REQUIRE(request.ok());
  CHECK(request->gpus == 4);
  REQUIRE(transport.requests().size() == 1);
  CHECK(transport.requests()[0].method == "GET");
  CHECK(transport.requests()[0].path == "/api/v1/namespaces/ml/pods/train");
}

TEST_CASE("getPod: 404 is not found, 5xx unavailable, 403 a precondition; bad names never sent") {
  FakeTransport transport;
  int status = 404;
  transport.onSend = [&status](const RecordedRequest&) {
    return gte::Result<gte::kube::HttpResponse>(gte::kube::HttpResponse{status, "{}"});
  };
  CHECK(gte::cluster::getPod(transport, "ml", "gone").error().code == ErrorCode::kNotFound);
  status = 503;
  CHECK(gte::cluster::getPod(transport, "ml", "x").error().code == ErrorCode::kUnavailable);
  status = 403;
  CHECK(gte::cluster::getPod(transport, "ml", "x").error().code == ErrorCode::kFailedPrecondition);
  const std::size_t sent = transport.requests().size();
  CHECK(gte::cluster::getPod(transport, "ml", "x/y").error().code == ErrorCode::kInvalidArgument);
  CHECK(gte::cluster::getPod(transport, "ML", "x").error().code == ErrorCode::kInvalidArgument);
  CHECK(gte::cluster::getPod(transport, "ml", "..").error().code == ErrorCode::kInvalidArgument);
  CHECK(transport.requests().size() == sent);
}
