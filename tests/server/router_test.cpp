// The Router without a socket: which verb a path reaches, methods and unknown paths, the path
// prefix, health and version endpoints, and the request metric each answer records.
#include "server/router.h"

#include <catch2/catch_test_macros.hpp>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

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

TEST_CASE(
    "router: explain, whatif and nodes switched off, or on the probe port, are unknown paths") {
  metrics::Metrics metrics;
  auto policy = std::make_shared<const Policy>(defaultPolicy());
  ExtenderService service{[policy] { return policy; }, nullptr, &metrics};
  RouterOptions off;
  off.explain = false;
  off.whatif = false;
  off.nodes = false;
  RouterOptions probe;
  probe.serveVerbs = false;
  for (const RouterOptions& options : {off, probe}) {
    Router router("/scheduler", service, &metrics, "{}", options);
    for (const auto& [method, path] :
         {std::pair{"GET", "/explain?pod=ml/p"}, std::pair{"POST", "/scheduler/explain"},
          std::pair{"POST", "/scheduler/whatif"}, std::pair{"POST", "/whatif"},
          std::pair{"GET", "/scheduler/nodes"}, std::pair{"GET", "/nodes"}}) {
      CAPTURE(path);
      CHECK_FALSE(router.acceptsBody(method, path));
      Reply reply;
      router.dispatch(method, path, "{}", [&](Reply r) { reply = std::move(r); });
      CHECK(reply.status == 404);
    }
  }
  // Each switch turns off its own endpoint only.
  RouterOptions whatifOff;
  whatifOff.whatif = false;
  const Router router("/scheduler", service, &metrics, "{}", whatifOff);
  CHECK_FALSE(router.acceptsBody("POST", "/whatif"));
  CHECK(router.acceptsBody("GET", "/nodes"));
  CHECK(router.acceptsBody("GET", "/explain?pod=ml/p"));
}

}  // namespace gte::server

namespace gte::server {

TEST_CASE("router: whatif and nodes, under the prefix and at the root, with their methods") {
  Fixture f;
  // Both may take a while (a what-if up to its deadline): they go to the decision pool, with their
  // own method only.
  for (const auto& [method, path, pooled] :
       {std::tuple{"POST", "/scheduler/whatif", true}, std::tuple{"POST", "/whatif", true},
        std::tuple{"GET", "/scheduler/nodes?node=n1", true}, std::tuple{"GET", "/nodes", true},
        std::tuple{"GET", "/whatif", false}, std::tuple{"POST", "/nodes", false}}) {
    CAPTURE(method, path);
    CHECK(f.router.acceptsBody(method, path) == pooled);
  }
  // Without a cluster cache both are configuration errors (400), per the error table.
  for (const char* path : {"/scheduler/whatif", "/whatif"}) {
    const Reply reply = f.call("POST", path, R"({"pod":{},"count":1})");
    CHECK(reply.status == 400);
    CHECK(contains(reply.body, "a what-if needs a cluster cache"));
  }
  for (const char* path : {"/scheduler/nodes", "/nodes"}) {
    const Reply reply = f.call("GET", path);
    CHECK(reply.status == 400);
    CHECK(contains(reply.body, "the node listing needs a cluster cache"));
  }
  // The other method: 405 with the one that works.
  for (const auto& [method, path, allow] :
       {std::tuple{"GET", "/scheduler/whatif", "POST"}, std::tuple{"POST", "/nodes", "GET"}}) {
    const Reply wrong = f.call(method, path);
    CHECK(wrong.status == 405);
    CHECK(header(wrong, "Allow") == allow);
  }
  CHECK(contains(f.metrics.serialize(),
                 R"(gpu_topology_extender_http_requests_total{code="400",verb="other"} 4)"));
}

TEST_CASE("router: ?format=table answers the operator table; bad views are refused first") {
  Fixture f;
  const Reply table = f.call("POST", "/scheduler/explain?format=table", kFilterBody);
  CHECK(table.status == 200);
  CHECK(table.contentType == "text/plain; charset=utf-8");
  CHECK(table.body == "pod ml/p: binpack\nNODE  VERDICT  SCORE  WIRE  GPUS  LINK  NUMA  REASON\n");
  CHECK(f.call("POST", "/scheduler/explain?format=json", kFilterBody).body.starts_with("{"));
  const Reply badFormat = f.call("POST", "/scheduler/explain?format=yaml", kFilterBody);
  CHECK(badFormat.status == 400);
  CHECK(contains(badFormat.body, R"(format: one of json, table; got \"yaml\")"));
  CHECK(f.call("GET", "/explain?pod=ml/p&format=table&top=0").status == 400);
  CHECK(f.call("GET", "/explain?pod=ml/p&format=table&top=x").status == 400);
  // The view is checked before the what-if runs (here it could not run at all: no cluster).
  CHECK(contains(f.call("POST", "/whatif?format=html", "{}").body, "format: one of json"));
  // An error stays JSON whatever the format asked.
  const Reply error = f.call("GET", "/nodes?format=table");
  CHECK(error.status == 400);
  CHECK(error.contentType == "application/json");
}

TEST_CASE("router: the node listing's limit is bounded by --max-nodes-per-request") {
  RouterOptions options;
  options.maxNodesPerRequest = 3;
  Fixture f("/scheduler", options);
  const Reply over = f.call("GET", "/nodes?limit=4");
  CHECK(over.status == 413);
  CHECK(contains(over.body, "limit: 4 nodes exceed --max-nodes-per-request (3)"));
  CHECK(f.call("GET", "/nodes?limit=0").status == 400);
  CHECK(f.call("GET", "/nodes?limit=two").status == 400);
  // Within the limit the listing itself answers (no cluster here: 400 from the service).
  CHECK(contains(f.call("GET", "/nodes?limit=3").body, "needs a cluster cache"));
}

}  // namespace gte::server
