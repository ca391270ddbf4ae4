#pragma once
// What the integration tests against a real kube-apiserver share: a started control plane with an
// admin client, Node and Pod bodies, a poll for a condition, a field of an answer, a node's free
// GPUs in a backend's snapshot.
#include <catch2/catch_test_macros.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "cluster/apiserver/api_server_backend.h"
#include "cluster/apiserver/control_plane.h"
#include "cluster/cluster_test_support.h"
#include "kube/api_client.h"
#include "kube/kubeconfig_file.h"

namespace gte::testing {

// A control plane and a client acting as its admin. start() REQUIREs every step, so call it from a
// TEST_CASE, after SKIPping when ControlPlane::binDir() is empty (the binaries are not built).
struct AdminSession {
  ControlPlane plane;
  kube::KubeConfig config;
  std::unique_ptr<kube::ApiClient> api;

  void start() {
    const auto started = plane.start();
    INFO((started.ok() ? std::string() : started.error().message));
    REQUIRE(started.ok());
    auto loaded = kube::loadKubeconfigFile(plane.kubeconfig());
    REQUIRE(loaded.ok());
    config = *loaded;
    auto client = kube::ApiClient::create(config);
    REQUIRE(client.ok());
    api = std::move(*client);
  }

  // POSTs `body` to `path`; the answer must be a success. Returns its body.
  std::string created(const std::string& path, const std::string& body) {
    auto response = api->send("POST", path, body);
    INFO(path << ": " << (response ? response->body : response.error().message));
    REQUIRE(response.ok());
    REQUIRE(response->success());
    return response->body;
  }
};

inline std::string nodeJson(const std::string& name, std::int64_t gen, const std::string& used) {
  const NodeInfo node = h100(name, gen, used);
  std::string labels;
  for (const auto& [key, value] : node.labels) {
    labels += (labels.empty() ? "\"" : ",\"") + key + "\":\"" + value + "\"";
  }
  return R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")" + name + R"(","labels":{)" +
         labels + R"(}},"status":{"capacity":{"nvidia.com/gpu":"8","pods":"110"}}})";
}

inline std::string podJson(const std::string& name, const std::string& node, int gpus) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","namespace":"default"},"spec":{)" +
         (node.empty() ? std::string() : R"("nodeName":")" + node + R"(",)") +
         R"("containers":[{"name":"c","image":"example/none",)"
         R"("resources":{"limits":{"nvidia.com/gpu":")" +
         std::to_string(gpus) + R"("}}}]}})";
}

inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = std::chrono::milliseconds(20'000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return condition();
}

inline int freeOn(const cluster::ApiServerBackend& backend, const std::string& node) {
  const auto snapshot = backend.snapshot();  // keeps the NodeState alive while it is read
  const auto* state = snapshot->find(node);
  return state == nullptr ? -1 : state->freeCount;
}

inline std::string field(const std::string& json, const std::string& key) {
  const std::string needle = "\"" + key + "\":\"";
  const auto at = json.find(needle);
  if (at == std::string::npos) return "";
  const auto end = json.find('"', at + needle.size());
  return json.substr(at + needle.size(), end - at - needle.size());
}

}  // namespace gte::testing
