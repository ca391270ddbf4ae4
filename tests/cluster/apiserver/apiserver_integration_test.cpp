// The API-server backend against a real etcd + kube-apiserver (loopback, TLS verified against the
// test CA, bearer token): readiness, a node label change reaching the snapshot within one watch
// event, a deleted pod freeing its GPUs, bind (Binding + annotation, idempotent), a forced
// 410 Gone, and watches surviving an API server restart. Skipped when the control-plane binaries
// are not built (tests/e2e/hack/build-control-plane.sh).
#include <catch2/catch_test_macros.hpp>

#include <atomic>
#include <chrono>
#include <thread>

#include "cluster/apiserver/api_server_backend.h"
#include "cluster/apiserver/control_plane.h"
#include "cluster/apiserver/integration_support.h"
#include "cluster/cluster_test_support.h"
#include "kube/api_client.h"
#include "kube/kubeconfig_file.h"

using namespace gte::cluster;
using namespace gte::kube;
using gte::BindRequest;
using gte::Result;
using gte::testing::ControlPlane;
using gte::testing::eventually;
using gte::testing::field;
using gte::testing::freeOn;
using gte::testing::nodeJson;
using gte::testing::podJson;
using std::chrono::milliseconds;

namespace {

// Passes everything through, and on request answers the next watch of a resource with an ERROR
// 410 event, as an API server does when the resourceVersion fell out of its window.
class GoneInjector final : public ApiTransport {
 public:
  explicit GoneInjector(std::shared_ptr<ApiTransport> inner) : inner_(std::move(inner)) {}
  void forceGone(std::string pathPrefix) {
    std::lock_guard lock(mutex_);
    gonePrefix_ = std::move(pathPrefix);
  }
  int lists(const std::string& pathPrefix) const {
    std::lock_guard lock(mutex_);
    int count = 0;
    for (const auto& path : listPaths_)
      count += path.rfind(pathPrefix, 0) == 0 ? 1 : 0;
    return count;
  }
  Result<HttpResponse> send(std::string_view method, const std::string& path,
                            const std::string& body, std::string_view contentType) override {
    if (method == "GET" && path.find("?limit=") != std::string::npos) {
      std::lock_guard lock(mutex_);
      listPaths_.push_back(path);
    }
    return inner_->send(method, path, body, contentType);
  }
  Result<HttpResponse> stream(const std::string& path,
                              const std::function<bool(std::string_view)>& onChunk,
                              Cancellation& cancel) override {
    {
      std::lock_guard lock(mutex_);
      if (!gonePrefix_.empty() && path.rfind(gonePrefix_, 0) == 0) {
        gonePrefix_.clear();
        onChunk(R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",)"
                R"("message":"too old resource version","reason":"Expired","code":410}})"
                "\n");
        return HttpResponse{200, ""};
      }
    }
    return inner_->stream(path, onChunk, cancel);
  }

 private:
  std::shared_ptr<ApiTransport> inner_;
  mutable std::mutex mutex_;
  std::string gonePrefix_;
  std::vector<std::string> listPaths_;
};

}  // namespace

TEST_CASE("API-server backend against a real kube-apiserver", "[apiserver]") {
  if (ControlPlane::binDir().empty()) {
    SKIP("control-plane binaries not built (tests/e2e/hack/build-control-plane.sh)");
  }
  gte::testing::AdminSession session;
  session.start();
  ControlPlane& plane = session.plane;
  const KubeConfig& config = session.config;
  ApiClient& api = *session.api;
  auto created = [&](const std::string& path, const std::string& body) {
    return session.created(path, body);
  };
  created("/api/v1/nodes", nodeJson("n1", 1000, "00000000"));

  // Every way of authenticating and verifying the server that a kubeconfig offers.
  auto listNodes = [&](const std::string& context) -> Result<HttpResponse> {
    auto contextConfig = loadKubeconfigFile(plane.kubeconfig(), context);
    REQUIRE(contextConfig.ok());
    auto contextClient = ApiClient::create(*contextConfig);
    REQUIRE(contextClient.ok());
    return (*contextClient)->send("GET", "/api/v1/nodes");
  };
  auto byCertificate = listNodes("cert");
  REQUIRE(byCertificate.ok());
  CHECK(byCertificate->status == 200);  // anonymous would get 403 from RBAC
  auto insecure = listNodes("insecure");
  REQUIRE(insecure.ok());
  CHECK(insecure->status == 200);
  auto wrongCa = listNodes("wrong-ca");
  CHECK_FALSE(wrongCa.ok());  // the server's certificate is not trusted

  auto client = ApiClient::create(config);
  REQUIRE(client.ok());
  auto transport =
      std::make_shared<GoneInjector>(std::shared_ptr<ApiTransport>(std::move(*client)));
  ApiServerBackendOptions options;
  options.minWatchTimeout = std::chrono::seconds(2);  // watches roll over every 2-4 s
  options.backoff = BackoffOptions{milliseconds(200), milliseconds(1000)};
  options.failureGrace = milliseconds(1500);
  ApiServerBackend backend(transport, gte::testing::testPolicy(), options);
  backend.start();
  REQUIRE(eventually([&] { return backend.ready(); }));
  CHECK(backend.snapshot()->synced);
  CHECK(freeOn(backend, "n1") == 8);

  // A node label change reaches the snapshot with the next watch event.
  const auto patchStart = std::chrono::steady_clock::now();
  auto patched = api.send("PATCH", "/api/v1/nodes/n1",
                          R"({"metadata":{"labels":{"gputopo.dev/used":"11000000",)"
                          R"("gputopo.dev/gen":"2000"}}})",
                          "application/merge-patch+json");
  REQUIRE(patched.ok());
  REQUIRE(patched->success());
  REQUIRE(eventually([&] { return freeOn(backend, "n1") == 6; }));
  CHECK(std::chrono::steady_clock::now() - patchStart < milliseconds(2000));

  // A pod created bound counts (the agent has not written since); deleting it frees its GPUs.
  created("/api/v1/namespaces/default/pods", podJson("bound", "n1", 2));
  REQUIRE(eventually([&] { return freeOn(backend, "n1") == 4; }));
  auto deleted = api.send("DELETE", "/api/v1/namespaces/default/pods/bound?gracePeriodSeconds=0");
  REQUIRE(deleted.ok());
  REQUIRE(deleted->success());
  REQUIRE(eventually([&] { return freeOn(backend, "n1") == 6; }));

  // Bind: the Binding lands, the predicted GPUs are annotated, a repeat is a success.
  const std::string pending = created("/api/v1/namespaces/default/pods", podJson("pending", "", 1));
  const std::string uid = field(pending, "uid");
  REQUIRE_FALSE(uid.empty());
  // Explain reads a pending pod by name with one GET (the cache keeps no pending pods).
  auto explained = backend.podByName("default", "pending");
  REQUIRE(explained.ok());
  CHECK(explained->uid == uid);
  CHECK(explained->nodeName.empty());
  CHECK(backend.podByName("default", "absent").error().code == gte::ErrorCode::kNotFound);
  const BindRequest bind{"pending", "default", uid, "n1"};
  auto bound = backend.bind(bind);
  INFO((bound.ok() ? std::string("ok") : bound.error().message));
  REQUIRE(bound.ok());
  CHECK(freeOn(backend, "n1") == 5);
  auto pod = api.send("GET", "/api/v1/namespaces/default/pods/pending");
  REQUIRE(pod.ok());
  CHECK(field(pod->body, "nodeName") == "n1");
  CHECK_FALSE(field(pod->body, "gputopo.dev/gpus").empty());
  CHECK(backend.bind(bind).ok());
  auto elsewhere = backend.bind(BindRequest{"pending", "default", uid, "n2"});
  CHECK_FALSE(elsewhere.ok());
  REQUIRE(eventually([&] { return backend.state().reservationCount() == 0; }));
  CHECK(freeOn(backend, "n1") == 5);  // now counted as a bound pod, seen through the watch

  // A forced 410 Gone makes the node cache re-list, and the watch carries on from the new list.
  const int nodeListsBefore = transport->lists("/api/v1/nodes");
  transport->forceGone("/api/v1/nodes");
  REQUIRE(eventually([&] { return transport->lists("/api/v1/nodes") > nodeListsBefore; }));
  created("/api/v1/nodes", nodeJson("n2", 1000, "00000000"));
  REQUIRE(eventually([&] { return freeOn(backend, "n2") == 8; }));

  // The API server restarts: the backend turns unhealthy while it is gone, then resumes.
  REQUIRE(plane.stopApiServer().ok());
  std::string why;
  REQUIRE(eventually([&] { return !backend.healthy(&why); }));
  CHECK(why.find("failing") != std::string::npos);
  CHECK(freeOn(backend, "n1") == 5);  // the last known state keeps serving
  const auto restarted = plane.startApiServer();
  INFO((restarted.ok() ? std::string() : restarted.error().message));
  REQUIRE(restarted.ok());
  REQUIRE(eventually([&] { return backend.healthy(&why); }, milliseconds(30'000)));
  created("/api/v1/namespaces/default/pods", podJson("after-restart", "n2", 4));
  REQUIRE(eventually([&] { return freeOn(backend, "n2") == 4; }));

  const auto stopStart = std::chrono::steady_clock::now();
  backend.stop(milliseconds(3000));
  CHECK(std::chrono::steady_clock::now() - stopStart < milliseconds(3000));
}
