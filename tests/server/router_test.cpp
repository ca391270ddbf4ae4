// The Router without a socket: which verb a path reaches, methods and unknown paths, the path
// prefix, health and version endpoints, and the request metric each answer records.
#include "server/router.h"

#include <catch2/catch_test_macros.hpp>
#include <memory>
#include <optional>
#include <string>

#include "metrics/metrics.h"
#include "policy/default_policy.h"
#include "service/extender_service.h"

namespace gte::server {
namespace {

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::optional<std::string> header(const Reply& reply, const std::string& name) {
  for (const auto& [key, value] : reply.headers) {
    if (key == name) return value;
  }
  return std::nullopt;
}

// A router over a service without a cluster (full-Node mode), as `serve` with no cluster flag.
struct Fixture {
  metrics::Metrics metrics;
  std::shared_ptr<const Policy> policy = std::make_shared<const Policy>(defaultPolicy());
  ExtenderService service{[this] { return policy; }, nullptr, &metrics};
  Router router;

  explicit Fixture(std::string prefix = "/scheduler", RouterOptions options = {})
      : router(std::move(prefix), service, &metrics, R"({"version":"test"})", options) {}

  Reply call(std::string_view method, std::string_view path, std::string_view body = {}) {
    Reply out;
    bool answered = false;
    router.dispatch(method, path, body, [&](Reply r) {
      out = std::move(r);
      answered = true;
    });
    REQUIRE(answered);  // without a cluster every verb, bind included, answers at once
    return out;
  }
};

const std::string kFilterBody =
    R"({"Pod":{"metadata":{"name":"p","namespace":"ml","uid":"u"},"spec":{"containers":[]}},)"
    R"("Nodes":{"items":[]},"NodeNames":null})";

TEST_CASE("router: each verb path reaches its verb") {
  Fixture f;
  const Reply filter = f.call("POST", "/scheduler/filter", kFilterBody);
  CHECK(filter.status == 200);
  CHECK(contains(filter.body, R"("FailedNodes":{})"));
  const Reply prioritize = f.call("POST", "/scheduler/prioritize", kFilterBody);
  CHECK(prioritize.status == 200);
  CHECK(prioritize.body == "[]");
  const Reply bind = f.call("POST", "/scheduler/bind",
                            R"({"PodName":"p","PodNamespace":"ml","PodUID":"u","Node":"n"})");
  CHECK(bind.status == 200);
  CHECK(contains(bind.body, "bind needs a cluster connection"));
  const Reply preempt = f.call(
      "POST", "/scheduler/preempt",
      R"({"Pod":{"metadata":{"name":"p"}},"NodeNameToVictims":{},"NodeNameToMetaVictims":null})");
  CHECK(preempt.status == 200);
  CHECK(contains(preempt.body, "NodeNameToMetaVictims"));
}

TEST_CASE("router: the prefix is matched exactly, trailing slashes and queries ignored") {
  Fixture slashed("/scheduler/");
  CHECK(slashed.call("POST", "/scheduler/filter?x=1", kFilterBody).status == 200);
  CHECK(slashed.call("POST", "/schedulerx/filter", kFilterBody).status == 404);
  CHECK(slashed.call("POST", "/filter", kFilterBody).status == 404);
  Fixture root("/");
  CHECK(root.call("POST", "/filter", kFilterBody).status == 200);
}

TEST_CASE("router: wrong methods and unknown paths") {
  Fixture f;
  const Reply get = f.call("GET", "/scheduler/filter");
  CHECK(get.status == 405);
  CHECK(header(get, "Allow") == "POST");
  const Reply postHealth = f.call("POST", "/healthz");
  CHECK(postHealth.status == 405);
  CHECK(header(postHealth, "Allow") == "GET, HEAD");
  const Reply unknown = f.call("GET", "/nope");
  CHECK(unknown.status == 404);
  CHECK(contains(unknown.body, "no such endpoint: /nope"));
}

TEST_CASE("router: health, readiness, version and metrics") {
  Fixture f;
  CHECK(f.call("GET", "/healthz").body == "ok\n");
  CHECK(f.call("GET", "/livez").status == 200);
  CHECK(f.call("GET", "/readyz").body == "ok\n");
  CHECK(f.call("HEAD", "/readyz").body.empty());
  const Reply version = f.call("GET", "/version");
  CHECK(version.body == R"({"version":"test"})");
  CHECK(version.contentType == "application/json");
  const Reply metrics = f.call("GET", "/metrics");
  CHECK(contains(metrics.contentType, "version=0.0.4"));
  CHECK(contains(metrics.body, "gpu_topology_extender_http_requests_total"));
}

TEST_CASE("router: bodies are read only for POSTs to a verb") {
  Fixture f;
  CHECK(f.router.acceptsBody("POST", "/scheduler/filter"));
  CHECK(f.router.acceptsBody("POST", "/scheduler/bind?x"));
  CHECK_FALSE(f.router.acceptsBody("GET", "/scheduler/filter"));
  CHECK_FALSE(f.router.acceptsBody("POST", "/healthz"));
  CHECK_FALSE(f.router.acceptsBody("POST", "/scheduler/other"));
}

TEST_CASE("router: every answer is counted by verb and status") {
  Fixture f;
  f.call("POST", "/scheduler/filter", kFilterBody);
  f.call("POST", "/scheduler/prioritize", "[1,");
  f.call("GET", "/scheduler/preempt");
  f.call("GET", "/nope");
  CHECK(f.router.tooLarge("/scheduler/filter", 10).status == 413);
  CHECK(f.router.badRequest("/scheduler/filter", "bad header").status == 400);
  const std::string text = f.metrics.serialize();
  CHECK(contains(text, R"(gpu_topology_extender_http_requests_total{code="200",verb="filter"} 1)"));
  CHECK(contains(text,
                 R"(gpu_topology_extender_http_requests_total{code="400",verb="prioritize"} 1)"));
  CHECK(
      contains(text, R"(gpu_topology_extender_http_requests_total{code="405",verb="preempt"} 1)"));
  CHECK(contains(text, R"(gpu_topology_extender_http_requests_total{code="404",verb="other"} 1)"));
  CHECK(contains(text,
                 R"(gpu_topology_extender_rejected_requests_total{reason="body_too_large"} 1)"));
  CHECK(contains(text, R"(gpu_topology_extender_rejected_requests_total{reason="bad_request"} 1)"));
  CHECK(contains(text,
                 R"(gpu_topology_extender_rejected_requests_total{reason="malformed_json"} 1)"));
}

TEST_CASE("router: NodeNames without a cluster is a configuration error, per the error table") {
  Fixture f;
  const std::string body =
      R"({"Pod":{"metadata":{"name":"p","namespace":"ml","uid":"u"},"spec":{"containers":[]}},)"
      R"("Nodes":null,"NodeNames":["a"]})";
  // Filter has an Error field: HTTP 200 with the message, so it reaches the pod's events.
  const Reply filter = f.call("POST", "/scheduler/filter", body);
  CHECK(filter.status == 200);
  CHECK(contains(filter.body, R"("Error":"gpu-topology: NodeNames received but the extender)"));
  // Prioritize has none: 400, not 503 (waiting will not fix it).
  const Reply prioritize = f.call("POST", "/scheduler/prioritize", body);
  CHECK(prioritize.status == 400);
  CHECK(contains(prioritize.body, "nodeCacheCapable: false"));
}

TEST_CASE("router: refusals by the request limits, per verb, counted by reason") {
  RouterOptions options;
  options.maxNodesPerRequest = 2;
  options.namesOnly = true;
  Fixture f("/scheduler", options);
  const std::string pod =
      R"({"Pod":{"metadata":{"name":"p","namespace":"ml","uid":"u"},"spec":{"containers":[]}},)";
  // Filter and prioritize: their parse enforces the limits.
  const Reply objects = f.call("POST", "/scheduler/filter", kFilterBody);
  CHECK(objects.status == 200);
  CHECK(contains(objects.body, "full Node objects refused"));
  CHECK(contains(objects.body, "nodeCacheCapable: true"));
  CHECK(f.call("POST", "/scheduler/prioritize", kFilterBody).status == 400);
  const std::string three = pod + R"("Nodes":null,"NodeNames":["a","b","c"]})";
  const Reply many = f.call("POST", "/scheduler/filter", three);
  CHECK(many.status == 200);
  CHECK(contains(many.body, "request names more than 2 nodes (--max-nodes-per-request)"));
  // Verbs without an Error field answer the error table's status: 413 for a request over a limit,
  // 400 for a configuration mismatch.
  const Reply manyScores = f.call("POST", "/scheduler/prioritize", three);
  CHECK(manyScores.status == 413);
  CHECK(manyScores.body ==
        R"j({"Error":"gpu-topology: request names more than 2 nodes (--max-nodes-per-request)"})j");
  // Preempt and explain: the skim of the body enforces them.
  const Reply victims =
      f.call("POST", "/scheduler/preempt",
             pod + R"("NodeNameToMetaVictims":{"a":{"Pods":[]},"b":{"Pods":[]},"c":{"Pods":[]}}})");
  CHECK(victims.status == 413);
  CHECK(contains(victims.body, "gpu-topology: request names more than 2 nodes"));
  CHECK(f.call("POST", "/scheduler/explain", three).status == 413);
  const Reply explainObjects = f.call("POST", "/scheduler/explain", kFilterBody);
  CHECK(explainObjects.status == 400);
  CHECK(contains(explainObjects.body, "gpu-topology: full Node objects refused"));
  const std::string text = f.metrics.serialize();
  CHECK(contains(
      text, R"(gpu_topology_extender_rejected_requests_total{reason="full_nodes_refused"} 3)"));
  CHECK(contains(text,
                 R"(gpu_topology_extender_rejected_requests_total{reason="too_many_nodes"} 4)"));
  CHECK_FALSE(contains(text, R"(reason="malformed_json"} 1)"));
}

TEST_CASE("router: every error body carries the reason prefix, transport refusals included") {
  Fixture f;
  for (const Reply& reply :
       {f.call("GET", "/nope"), f.call("GET", "/scheduler/filter"), f.call("POST", "/healthz"),
        f.call("GET", "/scheduler/explain"), f.call("DELETE", "/explain"),
        f.call("POST", "/scheduler/prioritize", "[1,"), f.router.tooLarge("/scheduler/filter", 10),
        f.router.headerTooLarge(10), f.router.badRequest("/scheduler/filter", "bad header")}) {
    CAPTURE(reply.status, reply.body);
    CHECK(reply.status >= 400);
    CHECK(reply.body.starts_with(R"({"Error":"gpu-topology: )"));
    CHECK(reply.contentType == "application/json");
  }
  // Explain by GET without a pod: the error table's explain column.
  const Reply noPod = f.call("GET", "/explain");
  CHECK(noPod.status == 400);
  CHECK(contains(noPod.body, "GET needs ?pod=NAMESPACE/NAME"));
  const Reply wrong = f.call("PUT", "/scheduler/explain");
  CHECK(wrong.status == 405);
  CHECK(header(wrong, "Allow") == "GET, POST");
}

}  // namespace
}  // namespace gte::server

namespace gte::server {

TEST_CASE("router: explain goes to the decision pool, under the prefix and at /explain") {
  Fixture f;
  // Explain by name may wait on the API server: the transport must not answer it on an I/O
  // thread, so it is routed like a verb.
  CHECK(f.router.acceptsBody("GET", "/explain?pod=ml/p"));
  CHECK(f.router.acceptsBody("GET", "/scheduler/explain?pod=ml/p"));
  CHECK(f.router.acceptsBody("POST", "/scheduler/explain"));
  CHECK_FALSE(f.router.acceptsBody("GET", "/scheduler/explainer"));
  const Reply posted = f.call("POST", "/scheduler/explain", kFilterBody);
  CHECK(posted.status == 200);
  CHECK(contains(posted.body, R"("mode":"nodes")"));
  CHECK(f.call("PUT", "/explain").status == 405);
  CHECK(contains(f.metrics.serialize(),
                 R"(gpu_topology_extender_http_requests_total{code="200",verb="other"} 1)"));
}

TEST_CASE("router: explain switched off, or on the probe port, is an unknown path") {
  metrics::Metrics metrics;
  auto policy = std::make_shared<const Policy>(defaultPolicy());
  ExtenderService service{[policy] { return policy; }, nullptr, &metrics};
  RouterOptions off;
  off.explain = false;
  RouterOptions probe;
  probe.serveVerbs = false;
  for (const RouterOptions& options : {off, probe}) {
    Router router("/scheduler", service, &metrics, "{}", options);
    CHECK_FALSE(router.acceptsBody("GET", "/explain?pod=ml/p"));
    CHECK_FALSE(router.acceptsBody("POST", "/scheduler/explain"));
    Reply reply;
    router.dispatch("GET", "/explain?pod=ml/p", {}, [&](Reply r) { reply = std::move(r); });
    CHECK(reply.status == 404);
  }
}

}  // namespace gte::server
