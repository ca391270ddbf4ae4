// HTTP tests against the started binary: the protocol edges kube-scheduler relies on and the
// bad-input table of docs/api.md. Each case also checks the server keeps serving afterwards.
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "extender_process.h"
#include "http_test_client.h"

using gte::testing::ExtenderProcess;
using gte::testing::HttpConnection;
using gte::testing::httpRequest;

namespace {

const std::string kPolicy = std::string(GTE_SOURCE_DIR) + "/config/scheduler-policy.yaml";

std::string pod(const std::string& gpus, const std::string& annotations = "") {
  return R"({"metadata":{"name":"train-0","namespace":"ml","uid":"u-1")" +
         (annotations.empty() ? "" : R"(,"annotations":)" + annotations) +
         R"(},"spec":{"containers":[{"name":"main","resources":{"limits":{"nvidia.com/gpu":")" +
         gpus + R"("},"requests":{"nvidia.com/gpu":")" + gpus + R"("}}}]}})";
}

// DGX-1V worked example of docs/labels.md (labels-v1 spec): GPUs 2 and 5 in use.
std::string dgx1Node(const std::string& name, const std::string& used = "00100100") {
  return R"({"metadata":{"name":")" + name +
         R"(","labels":{"gputopo.dev/v":"1","gputopo.dev/n":"8",)"
         R"("gputopo.dev/model":"Tesla-V100-SXM2-16GB","gputopo.dev/fabric":"mesh",)"
         R"("gputopo.dev/nvl":"1122000210200200100001112212","gputopo.dev/pci":"PHHSSSSHHSSSSPSSSSSSSSPHHHHP",)"
         R"("gputopo.dev/numa":"00001111","gputopo.dev/health":"11111111","gputopo.dev/used":")" +
         used +
         R"(","gputopo.dev/mig":"nnnnnnnn","gputopo.dev/gen":"1764670000"}},)"
         R"("status":{"allocatable":{"nvidia.com/gpu":"8","cpu":"64"},"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}}}})";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("The binary serves health, readiness, version and metrics") {
  ExtenderProcess ext({"--policy", kPolicy});
  REQUIRE(ext.running());
  CHECK(httpRequest(ext.port(), "GET", "/healthz").status == 200);
  CHECK(httpRequest(ext.port(), "GET", "/readyz").status == 200);
  auto version = httpRequest(ext.port(), "GET", "/version");
  CHECK(version.status == 200);
  CHECK(contains(version.body, R"("version":)"));
  httpRequest(ext.port(), "POST", "/scheduler/filter", "{");
  auto metrics = httpRequest(ext.port(), "GET", "/metrics");
  CHECK(metrics.status == 200);
  CHECK(contains(metrics.body,
                 R"(gpu_topology_extender_http_requests_total{code="200",verb="filter"} 1)"));
  CHECK(contains(metrics.body, "gpu_topology_extender_policy_info{hash="));
  CHECK(ext.terminate() == 0);
}

TEST_CASE("Full-Node filter keeps fitting nodes byte for byte and prioritize answers an array") {
  ExtenderProcess ext({"--policy", kPolicy});
  const std::string a = dgx1Node("gpu-a");
  const std::string full = dgx1Node("gpu-full", "11111111");
  const std::string body = R"({"Pod":)" + pod("2") + R"(,"Nodes":{"metadata":{},"items":[)" + a +
                           "," + full + R"(]},"NodeNames":null})";
  auto r = httpRequest(ext.port(), "POST", "/scheduler/filter", body);
  REQUIRE(r.status == 200);
  CHECK(contains(r.body, R"({"Nodes":{"metadata":{},"items":[)" + a + "]}"));
  CHECK(contains(r.body, R"("NodeNames":null)"));
  CHECK(contains(r.body, R"("FailedNodes":{"gpu-full":"gpu-topology: )"));
  CHECK(contains(r.body, R"("Error":"")"));

  auto p = httpRequest(
      ext.port(), "POST", "/scheduler/prioritize",
      R"({"Pod":)" + pod("2") + R"(,"Nodes":{"items":[)" + a + R"(]},"NodeNames":null})");
  REQUIRE(p.status == 200);
  CHECK(p.body.front() == '[');
  CHECK(contains(p.body, R"({"Host":"gpu-a","Score":)"));
}

TEST_CASE("Bad input answers a clear error and the server keeps serving") {
  ExtenderProcess ext({"--policy", kPolicy, "--max-body-bytes", "65536"});
  struct Case {
    const char* name;
    std::string method;
    std::string path;
    std::string body;
    int status;
    std::string expect;
  };
  const std::string deep =
      R"({"metadata":{"labels":)" + std::string(500, '[') + std::string(500, ']') + "}}";
  const std::vector<Case> cases = {
      {"malformed JSON", "POST", "/scheduler/filter", "{\"Pod\":", 200, "malformed"},
      {"wrong type", "POST", "/scheduler/filter", R"({"Pod":[],"NodeNames":[]})", 200,
       "Pod: expected an object"},
      {"missing Pod", "POST", "/scheduler/filter", R"({"NodeNames":["a"]})", 200, "no Pod"},
      {"NodeNames without a cluster", "POST", "/scheduler/filter",
       R"({"Pod":)" + pod("1") + R"(,"NodeNames":["a"]})", 200, "nodeCacheCapable"},
      {"invalid quantity", "POST", "/scheduler/filter",
       R"({"Pod":)" + pod("1.5.1") + R"(,"Nodes":{"items":[]}})", 200, "invalid quantity"},
      {"deep nesting", "POST", "/scheduler/filter", R"({"Pod":)" + deep + "}", 200,
       "nesting too deep"},
      {"prioritize malformed", "POST", "/scheduler/prioritize", "[1,", 400,
       "expected a JSON object"},
      {"prioritize truncated", "POST", "/scheduler/prioritize", R"({"Pod":{)", 400, "malformed"},
      {"preempt malformed", "POST", "/scheduler/preempt", R"({"Pod":5})", 400, "Pod"},
      {"bind without a cluster", "POST", "/scheduler/bind",
       R"({"PodName":"p","PodNamespace":"ml","PodUID":"u","Node":"a"})", 200,
       "bind needs a cluster"},
      {"bind malformed", "POST", "/scheduler/bind", R"({"PodName":7})", 200, "PodName"},
      {"body too large", "POST", "/scheduler/filter", std::string(70000, ' '), 413,
       "--max-body-bytes"},
      {"wrong method", "GET", "/scheduler/filter", "", 405, "use POST"},
      {"unknown path", "POST", "/scheduler/nope", "{}", 404, "no such endpoint"},
      {"unknown path outside the prefix", "GET", "/admin", "", 404, "no such endpoint"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    auto r = httpRequest(ext.port(), c.method, c.path, c.body);
    CHECK(r.status == c.status);
    CHECK(contains(r.body, c.expect));
    CHECK(contains(r.body, R"("Error":")"));
    CHECK(httpRequest(ext.port(), "GET", "/healthz").status == 200);
  }
  CHECK(ext.running());
  const std::string log = ext.log();
  CHECK(contains(log, "level=warn"));
  CHECK(contains(log, "request body too large"));
}

TEST_CASE("Unknown node names in NodeNames mode are rejected by name, not by failing the call") {
  ExtenderProcess ext(
      {"--cluster-file", std::string(GTE_SOURCE_DIR) + "/tests/golden/cluster.yaml"});
  REQUIRE(httpRequest(ext.port(), "GET", "/readyz").status == 200);
  auto r = httpRequest(ext.port(), "POST", "/scheduler/filter",
                       R"({"Pod":)" + pod("1") + R"(,"Nodes":null,"NodeNames":["dgx1","nope"]})");
  CHECK(r.status == 200);
  CHECK(contains(r.body, R"("NodeNames":["dgx1"])"));
  CHECK(contains(r.body, R"("nope":"gpu-topology: node not in the extender's cache")"));
  auto p = httpRequest(ext.port(), "POST", "/scheduler/prioritize",
                       R"({"Pod":)" + pod("1") + R"(,"Nodes":null,"NodeNames":["nope"]})");
  CHECK(p.body == R"([{"Host":"nope","Score":0}])");
  auto b =
      httpRequest(ext.port(), "POST", "/scheduler/bind",
                  R"({"PodName":"train","PodNamespace":"ml","PodUID":"train-uid","Node":"nope"})");
  CHECK(b.status == 200);
  CHECK(contains(b.body, R"("Error":"gpu-topology: )"));
  CHECK_FALSE(contains(b.body, R"("Error":"")"));
}

TEST_CASE("Chunked bodies past the limit are refused as they arrive") {
  ExtenderProcess ext({"--max-body-bytes", "4096"});
  HttpConnection c(ext.port());
  REQUIRE(c.connected());
  std::string req =
      "POST /scheduler/filter HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Transfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 8; ++i)
    req += "400\r\n" + std::string(1024, ' ') + "\r\n";
  req += "0\r\n\r\n";
  REQUIRE(c.sendRaw(req));
  CHECK(c.readResponse().status == 413);
  CHECK(httpRequest(ext.port(), "GET", "/healthz").status == 200);
}

TEST_CASE("Keep-alive connections and concurrent clients are served") {
  ExtenderProcess ext({});
  const std::string body = R"({"Pod":)" + pod("1") + R"(,"Nodes":{"items":[)" + dgx1Node("a") +
                           R"(]},"NodeNames":null})";
  HttpConnection one(ext.port());
  for (int i = 0; i < 50; ++i) {
    REQUIRE(one.request("POST", "/scheduler/filter", body).status == 200);
  }
  std::vector<std::thread> threads;
  std::vector<int> okCount(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      HttpConnection c(ext.port());
      for (int i = 0; i < 25; ++i) {
        if (c.request("POST", "/scheduler/prioritize", body).status == 200) ++okCount[t];
      }
    });
  }
  for (auto& th : threads)
    th.join();
  for (int n : okCount)
    CHECK(n == 25);
}

// `--listen 127.0.0.1:0` was refused ("port must be 1-65535"); the kernel's pick is now logged.
TEST_CASE("serve with --listen HOST:0 takes a port the kernel picks and logs which") {
  ExtenderProcess ext({"--listen", "127.0.0.1:0"});
  REQUIRE(ext.running());
  CHECK(ext.port() != 0);
  CHECK(httpRequest(ext.port(), "GET", "/healthz").status == 200);
  CHECK(contains(ext.log(), "url=http://127.0.0.1:" + std::to_string(ext.port())));
}

TEST_CASE("A broken policy file at start-up stops the binary with a message naming the key") {
  char path[] = "/tmp/gte-bad-policy-XXXXXX";
  const int fd = mkstemp(path);
  const std::string bad = "weights:\n  linkQuality: -5\n";
  REQUIRE(write(fd, bad.data(), bad.size()) == static_cast<ssize_t>(bad.size()));
  close(fd);
  ExtenderProcess ext({"--policy", path});
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK_FALSE(ext.running());
  CHECK(contains(ext.log(), "weights.linkQuality"));
  // A start is no reload: nothing was "kept" (it first logged "reload failed; keeping the last
  // good policy", then exited).
  CHECK(contains(ext.log(), "policy file invalid; not starting"));
  CHECK_FALSE(contains(ext.log(), "keeping the last good policy"));
  unlink(path);
}

TEST_CASE(
    "Bind re-checks filter's fit: a pod whose NVLink pair was taken since filter is refused "
    "with filter's reason (--cluster-file)") {
  ExtenderProcess ext({"--cluster-file", std::string(GTE_SOURCE_DIR) +
                                             "/tests/data/clusters/a100-pcie-bind-race.yaml"});
  REQUIRE(httpRequest(ext.port(), "GET", "/readyz").status == 200);
  const std::string linked =
      R"({"metadata":{"name":"linked","namespace":"ml","uid":"linked-uid",)"
      R"("annotations":{"gputopo.dev/min-link":"nvlink"}},)"
      R"("spec":{"containers":[{"name":"main","resources":{"limits":{"nvidia.com/gpu":"2"}}}]}})";
  const std::string filterLinked =
      R"({"Pod":)" + linked + R"(,"Nodes":null,"NodeNames":["a100pcie"]})";

  auto before = httpRequest(ext.port(), "POST", "/scheduler/filter", filterLinked);
  CHECK(contains(before.body, R"("NodeNames":["a100pcie"])"));

  auto small = httpRequest(
      ext.port(), "POST", "/scheduler/bind",
      R"({"PodName":"small","PodNamespace":"ml","PodUID":"small-uid","Node":"a100pcie"})");
  CHECK(small.body == R"({"Error":""})");

  auto refused = httpRequest(
      ext.port(), "POST", "/scheduler/bind",
      R"({"PodName":"linked","PodNamespace":"ml","PodUID":"linked-uid","Node":"a100pcie"})");
  CHECK(refused.status == 200);
  CHECK(refused.body == R"({"Error":"gpu-topology: no 2 NVLink-connected free GPUs"})");

  // Filter now gives the same reason, as preemption-may-help (the empty node has NVLink pairs).
  auto after = httpRequest(ext.port(), "POST", "/scheduler/filter", filterLinked);
  CHECK(contains(after.body,
                 R"("FailedNodes":{"a100pcie":"gpu-topology: no 2 NVLink-connected free GPUs"})"));
}
