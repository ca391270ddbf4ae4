// The API-server backend end to end over a scripted transport: readiness after both lists, watch
// events reaching the snapshot, health, bindAsync, clean stop.
#include "cluster/apiserver/api_server_backend.h"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <future>
#include <thread>

#include "cluster/cluster_test_support.h"
#include "kube/fake_transport.h"
#include "support/dra_fixtures.h"
#include "support/node_fixtures.h"
#include "support/object_json.h"

using namespace gte::cluster;
using namespace gte::kube;
using gte::BindRequest;
using gte::Result;
using gte::Status;
using gte::testing::blockUntilCancelled;
using gte::testing::FakeTransport;
using gte::testing::ok;
using gte::testing::RecordedRequest;
using gte::testing::testPolicy;
using std::chrono::milliseconds;

namespace {

// A DGX H100's labels as JSON, with the agent's last write long ago.
std::string nodeJson(const std::string& name) {
  const gte::NodeInfo node = gte::testing::h100(name, 1000);
  std::string labels;
  for (const auto& [key, value] : node.labels) {
    labels += (labels.empty() ? "\"" : ",\"") + key + "\":\"" + value + "\"";
  }
  return R"({"metadata":{"name":")" + name + R"(","resourceVersion":"1","labels":{)" + labels +
         R"(}},"status":{"allocatable":{"nvidia.com/gpu":"8"}}})";
}

std::string podJson(const std::string& uid, const std::string& node, int gpus) {
  return R"({"metadata":{"name":"p-)" + uid + R"(","namespace":"ml","uid":")" + uid +
         R"(","resourceVersion":"5"},"spec":{"nodeName":")" + node +
         R"(","containers":[{"resources":{"limits":{"nvidia.com/gpu":")" + std::to_string(gpus) +
         R"("}}}]},"status":{"phase":"Running","conditions":[{"type":"PodScheduled",)"
         R"("status":"True","lastTransitionTime":"2026-01-01T00:00:00Z"}]}})";
}

bool waitFor(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(3000);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return condition();
}

int freeOn(const ApiServerBackend& backend, const std::string& node) {
  const auto snapshot = backend.snapshot();  // keeps the NodeState alive while it is read
  const auto* state = snapshot->find(node);
  return state == nullptr ? -1 : state->freeCount;
}

}  // namespace

TEST_CASE("API-server backend: ready once nodes and pods are listed; events update the snapshot") {
  auto transport = std::make_shared<FakeTransport>();
  std::promise<void> podWatchMayDelete;
  auto mayDelete = podWatchMayDelete.get_future().share();
  transport->onSend = [](const RecordedRequest& r) -> Result<HttpResponse> {
    if (r.path.rfind("/api/v1/nodes?", 0) == 0) {
      return ok(R"({"metadata":{"resourceVersion":"10"},"items":[)" + nodeJson("a") + "," +
                nodeJson("b") + "]}");
    }
    if (r.path.rfind("/api/v1/pods?", 0) == 0) {
      // A pending pod (kept for bind, charging nothing) and one bound after the agent's last
      // write (counted).
      return ok(R"({"metadata":{"resourceVersion":"20"},"items":[)" + podJson("pending", "", 1) +
                "," + podJson("running", "a", 2) + "]}");
    }
    if (r.method == "GET") return ok(podJson("new", "", 4));
    if (r.method == "POST") return HttpResponse{201, "{}"};
    return ok("{}");
  };
  transport->onStream = [mayDelete](int, const std::string& path, const auto& emit,
                                    Cancellation& cancel) -> Result<HttpResponse> {
    if (path.rfind("/api/v1/pods?", 0) == 0) {
      mayDelete.wait();
      emit(R"({"type":"DELETED","object":)" + podJson("running", "a", 2) + "}\n");
    }
    return blockUntilCancelled(cancel);
  };
  ApiServerBackendOptions options;
  options.housekeepingInterval = milliseconds(20);
  ApiServerBackend backend(transport, testPolicy(), options);
  CHECK_FALSE(backend.ready());
  CHECK_FALSE(backend.snapshot()->synced);
  backend.start();
  REQUIRE(waitFor([&] { return backend.ready(); }));
  REQUIRE(waitFor([&] { return backend.snapshot()->synced; }));
  CHECK(freeOn(backend, "a") == 6);
  CHECK(freeOn(backend, "b") == 8);
  CHECK(backend.podsOnNode("a").size() == 1);
  CHECK(backend.podByUid("running").has_value());
  CHECK_FALSE(backend.podByUid("pending").has_value());
  std::string why;
  CHECK(backend.healthy(&why));

  // The pod list uses a server-side filter for live pods.
  bool filtered = false;
  for (const auto& r : transport->requests()) {
    filtered =
        filtered || r.path.find("fieldSelector=status.phase%21%3DSucceeded") != std::string::npos;
  }
  CHECK(filtered);

  podWatchMayDelete.set_value();
  REQUIRE(waitFor([&] { return freeOn(backend, "a") == 8; }));
  CHECK_FALSE(backend.podByUid("running").has_value());

  std::promise<Status> bound;
  backend.bindAsync(BindRequest{"p-new", "ml", "new", "b"}, gte::BindCaller{},
                    [&bound](gte::BindOutcome o) { bound.set_value(std::move(o.status)); });
  auto status = bound.get_future().get();
  CHECK(status.ok());
  CHECK(freeOn(backend, "b") == 4);

  backend.stop(milliseconds(2000));
  // After stop, bindAsync answers at once with an error instead of hanging the caller.
  std::promise<Status> late;
  backend.bindAsync(BindRequest{"pending", "ml", "pending", "b"}, gte::BindCaller{},
                    [&late](gte::BindOutcome o) { late.set_value(std::move(o.status)); });
  CHECK_FALSE(late.get_future().get().ok());
}

// A burst of binds after start-up or a quiet spell must not wait for new TLS connections: the
// backend keeps --api-warm-connections of them in use, at start and every warmInterval, with
// concurrent GET /version whose answers (any status) it ignores. 0 sends none.
TEST_CASE("API-server backend: keeps API connections warm for bursts of binds") {
  for (const std::size_t warm : {std::size_t{0}, std::size_t{3}}) {
    auto transport = std::make_shared<FakeTransport>();
    transport->onSend = [](const RecordedRequest& r) -> Result<HttpResponse> {
      if (r.path == "/version") return HttpResponse{403, "{}"};
      return ok(R"({"metadata":{"resourceVersion":"1"},"items":[]})");
    };
    transport->onStream = [](int, const std::string&, const auto&,
                             Cancellation& cancel) -> Result<HttpResponse> {
      return blockUntilCancelled(cancel);
    };
    ApiServerBackendOptions options;
    options.housekeepingInterval = milliseconds(10);
    options.warmConnections = warm;
    options.warmInterval = milliseconds(50);
    ApiServerBackend backend(transport, testPolicy(), options);
    backend.start();
    const auto versions = [&] {
      std::size_t count = 0;
      for (const auto& r : transport->requests())
        count += r.path == "/version" ? 1 : 0;
      return count;
    };
    INFO("warm connections: " << warm);
    REQUIRE(waitFor([&] { return backend.ready(); }));
    if (warm == 0) {
      std::this_thread::sleep_for(milliseconds(120));
      CHECK(versions() == 0);
    } else {
      CHECK(waitFor([&] { return versions() >= 2 * warm; }));  // at start, then again
      std::string why;
      CHECK(backend.healthy(&why));  // their 403 answers are no failure
    }
    backend.stop(milliseconds(2000));
    CHECK(versions() % (warm == 0 ? 1 : warm) == 0);  // whole rounds of `warm` at once
  }
}

// --dra: ResourceSlices, DeviceClasses and ResourceClaims are listed and watched too; the cache is
// ready only once all five kinds are listed; an object that does not read is skipped and counted,
// never applied (and never stops the watch); allocated claims count as used GPUs on the DRA node
// and a deleted claim frees them. The HGX H100 fixture lists GPU i as gpu-<(i+4) mod 8>.
TEST_CASE("API-server backend with --dra: DRA lists and watches feed the cache") {
  using gte::testing::draFixtureText;
  auto node = gte::testing::makeDgxH100(
      gte::testing::FixtureState().withName("hgx-h100-a").withIdentities().withoutDevicePlugin());
  node.resourceVersion = "1";
  const std::string badSlice = R"({"metadata":{"name":"bad","resourceVersion":"3"},)"
                               R"("spec":{"driver":"gpu.nvidia.com","pool":{"name":7}}})";
  std::promise<void> claimsMayChange;
  auto mayChange = claimsMayChange.get_future().share();
  std::promise<void> releaseClasses;
  auto classesListed = releaseClasses.get_future().share();
  auto transport = std::make_shared<FakeTransport>();
  transport->onSend = [&](const RecordedRequest& r) -> Result<HttpResponse> {
    const auto list = [](const std::string& items) {
      return ok(R"({"metadata":{"resourceVersion":"10"},"items":[)" + items + "]}");
    };
    if (r.path.rfind("/api/v1/nodes?", 0) == 0) return list(gte::testing::nodeJson(node));
    if (r.path.rfind("/api/v1/pods?", 0) == 0) return list("");
    if (r.path.rfind("/apis/resource.k8s.io/v1/resourceslices?", 0) == 0) {
      return list(draFixtureText("hgx-h100-slice.json") + "," + badSlice);
    }
    if (r.path.rfind("/apis/resource.k8s.io/v1/deviceclasses?", 0) == 0) {
      classesListed.wait();  // the cache is not ready before this list
      return ok(draFixtureText("nvidia-device-classes.json"));
    }
    if (r.path.rfind("/apis/resource.k8s.io/v1/resourceclaims?", 0) == 0) {
      return list(draFixtureText("claim-allocated.json"));
    }
    return ok("{}");
  };
  transport->onStream = [&](int, const std::string& path, const auto& emit,
                            Cancellation& cancel) -> Result<HttpResponse> {
    if (path.rfind("/apis/resource.k8s.io/v1/resourceclaims?", 0) == 0) {
      mayChange.wait();
      emit(R"({"type":"MODIFIED","object":{"metadata":{"name":7}}})"
           "\n");
      // One event a line: the fixture's line breaks go.
      std::string claim = draFixtureText("claim-allocated.json");
      std::replace(claim.begin(), claim.end(), '\n', ' ');
      emit(R"({"type":"DELETED","object":)" + claim + "}\n");
    }
    return blockUntilCancelled(cancel);
  };
  ApiServerBackendOptions options;
  options.watchDra = true;
  ApiServerBackend backend(transport, testPolicy(), options);
  CHECK(backend.draEnabled());
  backend.start();
  std::this_thread::sleep_for(milliseconds(100));
  CHECK_FALSE(backend.ready());
  CHECK_FALSE(backend.snapshot()->synced);
  releaseClasses.set_value();
  REQUIRE(waitFor([&] { return backend.ready() && backend.snapshot()->synced; }));
  CHECK(freeOn(backend, "hgx-h100-a") == 7);  // claim-allocated holds gpu-1 (GPU 5)
  CHECK(backend.draWatches().slices.skipped == 1);
  CHECK(backend.draWatches().slices.lists == 1);
  CHECK(backend.state().draCounts().slices == 1);
  CHECK(backend.state().draCounts().classes == 5);
  // Discovery did not list devicetaintrules (this server answers "{}"): not watched, not waited
  // for.
  CHECK(backend.draWatches().taintRules.lists == 0);

  claimsMayChange.set_value();
  REQUIRE(waitFor([&] { return freeOn(backend, "hgx-h100-a") == 8; }));
  CHECK(backend.draWatches().claims.skipped == 1);
  std::string why;
  CHECK(backend.healthy(&why));
  backend.stop(milliseconds(2000));
}

// --dra on an API server whose discovery lists devicetaintrules (Kubernetes 1.37): the rules are
// listed and watched, the cache is ready only once they are listed, a rule's taint takes the device
// it selects (gpu-3 = GPU 7), a rule that does not read is skipped and counted, and a deleted rule
// gives the device back.
TEST_CASE("API-server backend with --dra: DeviceTaintRules are watched where served") {
  using gte::testing::draFixtureText;
  auto node = gte::testing::makeDgxH100(
      gte::testing::FixtureState().withName("hgx-h100-a").withIdentities().withoutDevicePlugin());
  node.resourceVersion = "1";
  const std::string rule =
      R"({"metadata":{"name":"maintenance","resourceVersion":"4"},"spec":{"deviceSelector":)"
      R"({"pool":"hgx-h100-a","device":"gpu-3"},"taint":{"key":"k","effect":"NoSchedule"}}})";
  const std::string badRule = R"({"metadata":{"name":"bad"},"spec":{"taint":{"key":"k"}}})";
  std::promise<void> releaseRules;
  auto rulesListed = releaseRules.get_future().share();
  std::promise<void> releaseDelete;
  auto mayDelete = releaseDelete.get_future().share();
  auto transport = std::make_shared<FakeTransport>();
  transport->onSend = [&](const RecordedRequest& r) -> Result<HttpResponse> {
    const auto list = [](const std::string& items) {
      return ok(R"({"metadata":{"resourceVersion":"10"},"items":[)" + items + "]}");
    };
    if (r.path.rfind("/api/v1/nodes?", 0) == 0) return list(gte::testing::nodeJson(node));
    if (r.path.rfind("/api/v1/pods?", 0) == 0) return list("");
    if (r.path == "/apis/resource.k8s.io/v1") {
      return ok(R"({"kind":"APIResourceList","groupVersion":"resource.k8s.io/v1","resources":[)"
                R"({"name":"devicetaintrules"},{"name":"devicetaintrules/status"}]})");
    }
    if (r.path.rfind("/apis/resource.k8s.io/v1/resourceslices?", 0) == 0) {
      return list(draFixtureText("hgx-h100-slice.json"));
    }
    if (r.path.rfind("/apis/resource.k8s.io/v1/deviceclasses?", 0) == 0) {
      return ok(draFixtureText("nvidia-device-classes.json"));
    }
    if (r.path.rfind("/apis/resource.k8s.io/v1/resourceclaims?", 0) == 0) return list("");
    if (r.path.rfind("/apis/resource.k8s.io/v1/devicetaintrules?", 0) == 0) {
      rulesListed.wait();  // the cache is not ready before this list
      return list(rule + "," + badRule);
    }
    return ok("{}");
  };
  transport->onStream = [&](int, const std::string& path, const auto& emit,
                            Cancellation& cancel) -> Result<HttpResponse> {
    if (path.rfind("/apis/resource.k8s.io/v1/devicetaintrules?", 0) == 0) {
      mayDelete.wait();
      emit(R"({"type":"DELETED","object":)" + rule + "}\n");
    }
    return blockUntilCancelled(cancel);
  };
  ApiServerBackendOptions options;
  options.watchDra = true;
  ApiServerBackend backend(transport, testPolicy(), options);
  backend.start();
  std::this_thread::sleep_for(milliseconds(100));
  CHECK_FALSE(backend.ready());
  CHECK_FALSE(backend.snapshot()->synced);
  releaseRules.set_value();
  REQUIRE(waitFor([&] { return backend.ready() && backend.snapshot()->synced; }));
  CHECK(freeOn(backend, "hgx-h100-a") == 7);
  CHECK(backend.draWatches().taintRules.lists == 1);
  CHECK(backend.draWatches().taintRules.skipped == 1);
  CHECK(backend.state().draCounts().taintRules == 1);

  releaseDelete.set_value();
  REQUIRE(waitFor([&] { return freeOn(backend, "hgx-h100-a") == 8; }));
  CHECK(backend.state().draCounts().taintRules == 0);
  std::string why;
  CHECK(backend.healthy(&why));
  backend.stop(milliseconds(2000));
}
