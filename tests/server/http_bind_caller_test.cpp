// Bind over HTTP, the real binary against a fake API server on loopback whose Bindings the test
// holds: with --bind-concurrency 1, a second bind waits behind the first, and is dropped unsent
// (its GPUs released, the drop counted) when its caller hangs up or its --bind-deadline passes.
#include <cpprest/http_listener.h>
#include <cpprest/producerconsumerstream.h>

#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "extender_process.h"
#include "http_test_client.h"
#include "support/free_port.h"

using gte::testing::ExtenderProcess;
using gte::testing::HttpConnection;
using gte::testing::httpRequest;
using std::chrono::milliseconds;
using web::http::http_request;
using web::http::status_codes;
using web::http::experimental::listener::http_listener;

namespace {

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

bool eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return condition();
}

std::string podJson(const std::string& name) {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ml","uid":"uid-)" + name +
         R"(","resourceVersion":"5"},"spec":{"containers":[{"name":"m","resources":{"limits":)"
         R"({"nvidia.com/gpu":"1"}}}]},"status":{"phase":"Pending"}})";
}

// One node with 8 GPUs (no topology labels: one-GPU pods fit anyway), two pending pods, watches
// that stay open and quiet, and Bindings answered only when the test says so.
class FakeApiServer {
 public:
  FakeApiServer()
      : url_("http://127.0.0.1:" + std::to_string(gte::testing::freePort())), listener_(url_) {
    listener_.support([this](http_request request) { handle(std::move(request)); });
    listener_.open().wait();
  }
  ~FakeApiServer() {
    releaseBindings();
    {
      std::lock_guard lock(mutex_);
      for (auto& body : watches_)
        body.close(std::ios_base::out).wait();
    }
    listener_.close().wait();
  }
  const std::string& url() const { return url_; }
  std::vector<std::string> bindingPaths() {
    std::lock_guard lock(mutex_);
    return bindingPaths_;
  }
  void releaseBindings() {
    std::vector<http_request> held;
    {
      std::lock_guard lock(mutex_);
      held.swap(held_);
    }
    for (auto& request : held)
      request.reply(status_codes::Created, R"({"kind":"Status","status":"Success"})",
                    "application/json");
  }

 private:
  void handle(http_request request) {
    const std::string path = request.relative_uri().to_string();
    if (contains(path, "watch=1")) {
      concurrency::streams::producer_consumer_buffer<std::uint8_t> body;
      {
        std::lock_guard lock(mutex_);
        watches_.push_back(body);
      }
      request.reply(status_codes::OK, body.create_istream(), "application/json");
      return;
    }
    if (path.rfind("/api/v1/nodes", 0) == 0) {
      request.reply(status_codes::OK,
                    R"({"metadata":{"resourceVersion":"10"},"items":[{"metadata":{"name":"n1",)"
                    R"("resourceVersion":"1"},"status":{"allocatable":{"nvidia.com/gpu":"8"}}}]})",
                    "application/json");
      return;
    }
    if (path.rfind("/api/v1/pods", 0) == 0) {
      request.reply(status_codes::OK,
                    R"({"metadata":{"resourceVersion":"20"},"items":[)" + podJson("first") + "," +
                        podJson("second") + "]}",
                    "application/json");
      return;
    }
    if (contains(path, "/binding")) {
      std::lock_guard lock(mutex_);
      bindingPaths_.push_back(path);
      held_.push_back(std::move(request));
      return;
    }
    request.reply(status_codes::NotFound, R"({"kind":"Status","code":404})", "application/json");
  }

  std::string url_;
  http_listener listener_;
  std::mutex mutex_;
  std::vector<concurrency::streams::producer_consumer_buffer<std::uint8_t>> watches_;
  std::vector<http_request> held_;
  std::vector<std::string> bindingPaths_;
};

std::string writeKubeconfig(const std::string& server) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("gte_bind_caller_" + std::to_string(::getpid()) + ".kubeconfig");
  std::ofstream(path) << "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                         "clusters:\n- name: c\n  cluster:\n    server: "
                      << server
                      << "\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\n"
                         "users:\n- name: u\n  user: {token: test}\n";
  return path.string();
}

std::string bindBody(const std::string& pod) {
  return R"({"PodName":")" + pod + R"(","PodNamespace":"ml","PodUID":"uid-)" + pod +
         R"(","Node":"n1"})";
}

std::string bindRequest(const std::string& pod) {
  const std::string body = bindBody(pod);
  return "POST /scheduler/bind HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string metrics(std::uint16_t port) {
  return httpRequest(port, "GET", "/metrics").body;
}

}  // namespace

TEST_CASE("A bind whose caller hangs up or whose deadline passes while it waits is never sent") {
  FakeApiServer api;
  const std::string kubeconfig = writeKubeconfig(api.url());
  const bool hangUp = GENERATE(true, false);
  CAPTURE(hangUp);
  ExtenderProcess ext({"--kubeconfig", kubeconfig, "--bind-concurrency", "1", "--bind-deadline",
                       "1500ms", "--log-level", "debug"});
  REQUIRE(eventually([&ext] { return httpRequest(ext.port(), "GET", "/readyz").status == 200; }));

  // The first bind takes the only slot; its Binding is held by the fake API server.
  auto first = std::async(std::launch::async, [&ext] {
    return httpRequest(ext.port(), "POST", "/scheduler/bind", bindBody("first"));
  });
  REQUIRE(eventually([&api] { return api.bindingPaths().size() == 1; }));

  // The second is reserved and waits for the slot.
  HttpConnection second(ext.port());
  REQUIRE(second.sendRaw(bindRequest("second")));
  REQUIRE(eventually([&ext] {
    return contains(metrics(ext.port()),
                    R"(gpu_topology_extender_cache_objects{kind="reservation"} 2)");
  }));
  if (hangUp) {
    second.close();
    REQUIRE(eventually([&ext] { return contains(ext.log(), "the caller closed its connection"); }));
  } else {
    // Past --bind-deadline by the clock alone (the bind arrived before this sleep began).
    std::this_thread::sleep_for(milliseconds(1600));
  }
  api.releaseBindings();
  const auto firstAnswer = first.get();
  CHECK(firstAnswer.body == R"({"Error":""})");

  const std::string reason = hangUp ? "caller_gone" : "deadline";
  REQUIRE(eventually([&ext, &reason] {
    return contains(metrics(ext.port()),
                    "gpu_topology_extender_binds_abandoned_total{reason=\"" + reason + "\"} 1");
  }));
  if (!hangUp) {
    const auto answer = second.readResponse();
    CHECK(answer.status == 200);
    CHECK(contains(answer.body, "abandoned before it was sent"));
    CHECK(contains(answer.body, "--bind-deadline"));
  }
  // Never sent, and its GPU free again: only the first's reservation is left.
  CHECK(api.bindingPaths() == std::vector<std::string>{"/api/v1/namespaces/ml/pods/first/binding"});
  CHECK(eventually([&ext] {
    return contains(metrics(ext.port()),
                    R"(gpu_topology_extender_cache_objects{kind="reservation"} 1)");
  }));
  std::filesystem::remove(kubeconfig);
}
