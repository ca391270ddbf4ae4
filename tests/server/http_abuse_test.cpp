// Abuse cases against the started binary, one per row of docs/security.md's transport table: every
// limit answers or closes the connection (never buffers without bound or hangs), and the server
// keeps serving other clients. Limits are set small by flag so each case finishes quickly; the
// test client's 10 s socket timeout bounds every wait.
#include <signal.h>
#include <sys/resource.h>

#include <catch2/catch_test_macros.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "extender_process.h"
#include "http_test_client.h"

using gte::testing::ExtenderProcess;
using gte::testing::HttpConnection;
using gte::testing::httpRequest;
using gte::testing::HttpResponse;

#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif

namespace {

const std::string kClusterFile = std::string(GTE_SOURCE_DIR) + "/tests/golden/cluster.yaml";

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Resident memory of a process, from /proc.
std::size_t rssBytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10) * 1024;
  }
  return 0;
}

std::string pod(const std::string& gpus) {
  return R"({"metadata":{"name":"train-0","namespace":"ml","uid":"u-1"},"spec":{"containers":[)"
         R"({"name":"main","resources":{"limits":{"nvidia.com/gpu":")" +
         gpus + R"("}}}]}})";
}

// A 16-GPU node with no topology beyond its size: the most expensive node state to build. The
// distinct gen label defeats the per-content cache, so every node is built anew.
std::string bigNode(int i) {
  return R"({"metadata":{"name":"n)" + std::to_string(i) +
         R"(","labels":{"gputopo.dev/v":"1","gputopo.dev/n":"16","gputopo.dev/gen":")" +
         std::to_string(i) + R"("}},"status":{"allocatable":{"nvidia.com/gpu":"16"}}})";
}

std::string fullNodeArgs(int nodes) {
  std::string body = R"({"Pod":)" + pod("3") + R"(,"Nodes":{"metadata":{},"items":[)";
  for (int i = 0; i < nodes; ++i) {
    if (i > 0) body += ',';
    body += bigNode(i);
  }
  return body + R"(]},"NodeNames":null})";
}

std::string namesArgs(const std::vector<std::string>& names) {
  std::string body = R"({"Pod":)" + pod("1") + R"(,"Nodes":null,"NodeNames":[)";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) body += ',';
    body.append("\"").append(names[i]).append("\"");
  }
  return body + "]}";
}

std::string header(const std::string& method, const std::string& path, const std::string& extra) {
  return method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra + "\r\n";
}

// Sends `piece` until the server answers or closes, at most `maxBytes`; returns the answer.
HttpResponse sendUntilAnswered(HttpConnection& c, const std::string& piece, std::size_t maxBytes) {
  for (std::size_t sent = 0; sent < maxBytes; sent += piece.size()) {
    if (c.readable() || !c.sendRaw(piece)) break;
  }
  return c.readResponse();
}

// A connection that has been served once: retried while the server releases slots of connections
// closed a moment ago (the readiness polls of the process start, earlier cases).
std::unique_ptr<HttpConnection> servedConnection(std::uint16_t port) {
  for (int i = 0; i < 100; ++i) {
    auto c = std::make_unique<HttpConnection>(port);
    if (c->request("GET", "/healthz").status == 200) return c;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return nullptr;
}

}  // namespace

TEST_CASE("A declared Content-Length over the limit is refused before any body is sent") {
  ExtenderProcess ext({"--max-body-bytes", "65536"});
  REQUIRE(ext.running());
  HttpConnection c(ext.port());
  REQUIRE(c.sendRaw(header("POST", "/scheduler/filter", "Content-Length: 1000000000000\r\n")));
  const auto r = c.readResponse();
  CHECK(r.status == 413);
  CHECK(contains(r.body, "--max-body-bytes"));
  CHECK(c.waitClosed());
  CHECK(httpRequest(ext.port(), "GET", "/healthz").status == 200);
}

TEST_CASE("A body past the limit is refused as it arrives; memory stays bounded") {
  constexpr std::size_t kLimit = 1 << 20;
  ExtenderProcess ext({"--max-body-bytes", std::to_string(kLimit)});
  REQUIRE(ext.running());
  REQUIRE(httpRequest(ext.port(), "POST", "/scheduler/filter", "{").status == 200);  // warm up
  const std::size_t before = rssBytes(ext.pid());

  // 64 MiB offered in 64 KiB chunks: a server that buffered it would grow by that much.
  HttpConnection c(ext.port());
  REQUIRE(c.sendRaw(header("POST", "/scheduler/filter", "Transfer-Encoding: chunked\r\n")));
  const std::string chunk = "10000\r\n" + std::string(65536, ' ') + "\r\n";
  const auto r = sendUntilAnswered(c, chunk, std::size_t{64} << 20);
  CHECK(r.status == 413);
  const std::size_t after = rssBytes(ext.pid());
  // Under ThreadSanitizer every byte touched also maps shadow memory, so RSS says nothing about
  // buffering there; the other builds (release, ASan) hold the bound.
  if (!kThreadSanitizer) CHECK(after < before + 2 * kLimit + (std::size_t{4} << 20));
  CHECK(httpRequest(ext.port(), "GET", "/healthz").status == 200);
}

TEST_CASE("Chunk sizes that overflow, exceed the limit or are negative are refused") {
  ExtenderProcess ext({"--max-body-bytes", "65536"});
  REQUIRE(ext.running());
  for (const std::string size : {"7fffffff", "ffffffffffffffff", "10000000000000000", "-10"}) {
    CAPTURE(size);
    HttpConnection c(ext.port());
    REQUIRE(c.sendRaw(header("POST", "/scheduler/filter", "Transfer-Encoding: chunked\r\n") + size +
                      "\r\n" + std::string(4096, 'x')));
    const auto r = c.readResponse();
    CHECK((r.status == 400 || r.status == 413));
    CHECK(c.waitClosed());
  }
  CHECK(httpRequest(ext.port(), "GET", "/healthz").status == 200);
}

TEST_CASE("A header that never ends is refused at --max-header-bytes") {
  ExtenderProcess ext({"--max-header-bytes", "4096"});
  REQUIRE(ext.running());
  HttpConnection c(ext.port());
  const auto r = sendUntilAnswered(
      c, "GET /healthz HTTP/1.1\r\nX-Endless: " + std::string(1024, 'a'), std::size_t{16} << 20);
  CHECK(r.status == 431);
  CHECK(c.waitClosed());
  CHECK(httpRequest(ext.port(), "GET", "/healthz").status == 200);
}

TEST_CASE("Idle keep-alive connections are closed after --idle-timeout") {
  ExtenderProcess ext({"--idle-timeout", "300ms"});
  REQUIRE(ext.running());
  HttpConnection c(ext.port());
  REQUIRE(c.request("GET", "/healthz").status == 200);
  CHECK(c.waitClosed());
}

TEST_CASE("Slow requests are closed after --request-timeout, silent or trickling") {
  ExtenderProcess ext({"--request-timeout", "500ms"});
  REQUIRE(ext.running());
  HttpConnection silent(ext.port());
  HttpConnection trickle(ext.port());
  REQUIRE(trickle.sendRaw("GET /healthz HTTP/1.1\r\n"));
  // One header line every 100 ms: each byte arrives in time, the whole request never does.
  for (int i = 0; i < 100 && !trickle.readable(100); ++i) {
    if (!trickle.sendRaw("X-Slow-" + std::to_string(i) + ": 1\r\n")) break;
  }
  CHECK(trickle.waitClosed());
  CHECK(silent.waitClosed());
  CHECK(httpRequest(ext.port(), "GET", "/healthz").status == 200);
}

TEST_CASE("Connections over --max-connections are closed; the others are still served") {
  ExtenderProcess ext({"--max-connections", "2"});
  REQUIRE(ext.running());
  auto a = servedConnection(ext.port());
  auto b = servedConnection(ext.port());
  REQUIRE(a);
  REQUIRE(b);
  HttpConnection over(ext.port());
  CHECK(over.waitClosed());
  CHECK(a->request("GET", "/healthz").status == 200);
  b.reset();
  CHECK(servedConnection(ext.port()) != nullptr);  // the freed slot serves a new client
}

TEST_CASE("TRACE and OPTIONS are refused, never echoed") {
  ExtenderProcess ext({});
  REQUIRE(ext.running());
  const auto trace = httpRequest(ext.port(), "TRACE", "/healthz", {}, "X-Secret: hunter2\r\n");
  CHECK(trace.status == 405);
  CHECK_FALSE(contains(trace.body, "hunter2"));
  const auto options = httpRequest(ext.port(), "OPTIONS", "/scheduler/filter");
  CHECK(options.status == 405);
  CHECK(contains(options.headers, "Allow: POST"));
  CHECK(httpRequest(ext.port(), "TRACE", "/anything").status == 404);
}

TEST_CASE("Pipelined requests in one segment are answered in order") {
  ExtenderProcess ext({});
  REQUIRE(ext.running());
  HttpConnection c(ext.port());
  REQUIRE(c.sendRaw(header("GET", "/healthz", "") +
                    header("POST", "/scheduler/filter", "Content-Length: 1\r\n") + "{" +
                    header("GET", "/version", "")));
  const auto first = c.readResponse();
  const auto second = c.readResponse();
  const auto third = c.readResponse();
  CHECK(first.status == 200);
  CHECK(first.body == "ok\n");
  CHECK(second.status == 200);
  CHECK(contains(second.body, "malformed request body"));
  CHECK(third.status == 200);
  CHECK(contains(third.body, R"("version":)"));
}

TEST_CASE("HEAD answers the status without a body; the connection stays usable") {
  ExtenderProcess ext({});
  REQUIRE(ext.running());
  HttpConnection c(ext.port());
  REQUIRE(c.sendRaw(header("HEAD", "/healthz", "") + header("GET", "/healthz", "")));
  const auto head = c.readResponse();
  CHECK(head.status == 200);
  CHECK(head.body.empty());
  CHECK_FALSE(contains(head.headers, "Content-Length"));
  CHECK(c.readResponse().body == "ok\n");
}

TEST_CASE("Negative, doubled or conflicting Content-Length is a 400 and a closed connection") {
  ExtenderProcess ext({});
  REQUIRE(ext.running());
  for (const std::string framing :
       {"Content-Length: -5\r\n", "Content-Length: 1\r\nContent-Length: 1\r\n",
        "Content-Length: 1, 1\r\n", "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: gzip\r\n"}) {
    CAPTURE(framing);
    HttpConnection c(ext.port());
    REQUIRE(c.sendRaw(header("POST", "/scheduler/filter", framing) + "{"));
    CHECK(c.readResponse().status == 400);
    CHECK(c.waitClosed());
  }
  CHECK(httpRequest(ext.port(), "GET", "/healthz").status == 200);
}

TEST_CASE("Expect: 100-continue gets an interim answer before the body is sent") {
  ExtenderProcess ext({});
  REQUIRE(ext.running());
  HttpConnection c(ext.port());
  REQUIRE(c.sendRaw(
      header("POST", "/scheduler/filter", "Content-Length: 1\r\nExpect: 100-continue\r\n")));
  CHECK(c.readResponse().status == 100);
  REQUIRE(c.sendRaw("{"));
  CHECK(contains(c.readResponse().body, "malformed request body"));
}

TEST_CASE("/healthz, /readyz and /metrics answer while decisions are queued") {
  ExtenderProcess ext({"--decision-threads", "1", "--shutdown-grace", "0ms"});
  REQUIRE(ext.running());
  // Two requests of 5,000 never-seen 16-GPU nodes each: with one decision thread the second
  // waits for the first, which takes seconds of CPU.
  const std::string heavy = fullNodeArgs(5000);
  HttpConnection first(ext.port());
  HttpConnection second(ext.port());
  const std::string request = header("POST", "/scheduler/filter",
                                     "Content-Length: " + std::to_string(heavy.size()) + "\r\n") +
                              heavy;
  REQUIRE(first.sendRaw(request));
  REQUIRE(second.sendRaw(request));
  CHECK(httpRequest(ext.port(), "GET", "/healthz").status == 200);
  CHECK(httpRequest(ext.port(), "GET", "/readyz").status == 200);
  CHECK(httpRequest(ext.port(), "GET", "/metrics").status == 200);
  CHECK_FALSE(second.readable());  // the probes did not wait for the decisions
}

// With a drain period (the default): http_drain_test.cpp.
TEST_CASE(
    "Without a drain period SIGTERM fails /readyz, stops accepting, answers what is in flight") {
  ExtenderProcess ext({"--drain-period", "0s", "--shutdown-grace", "10s"});
  REQUIRE(ext.running());
  const std::string body = fullNodeArgs(1);
  HttpConnection decision(ext.port());
  HttpConnection probe(ext.port());
  // Both connections are accepted (served once), and their next requests half sent when the
  // signal arrives.
  REQUIRE(decision.request("GET", "/healthz").status == 200);
  REQUIRE(probe.request("GET", "/healthz").status == 200);
  REQUIRE(decision.sendRaw(header("POST", "/scheduler/filter",
                                  "Content-Length: " + std::to_string(body.size()) + "\r\n") +
                           body.substr(0, 10)));
  REQUIRE(probe.sendRaw("GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
  ext.signal(SIGTERM);
  bool refused = false;
  for (int i = 0; i < 500 && !refused; ++i) {
    refused = !HttpConnection(ext.port()).connected();
    if (!refused) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(refused);
  REQUIRE(probe.sendRaw("\r\n"));
  const auto ready = probe.readResponse();
  CHECK(ready.status == 503);
  CHECK(contains(ready.body, "shutting down"));
  REQUIRE(decision.sendRaw(body.substr(10)));
  const auto answer = decision.readResponse();
  CHECK(answer.status == 200);
  CHECK(contains(answer.body, R"("FailedAndUnresolvableNodes")"));
  CHECK(contains(answer.headers, "Connection: close"));
  CHECK(ext.waitExit() == 0);
}

TEST_CASE("With a cluster cache, full Node bodies and oversized requests are refused") {
  ExtenderProcess ext({"--cluster-file", kClusterFile, "--max-nodes-per-request", "2"});
  REQUIRE(ext.running());
  const auto full = httpRequest(ext.port(), "POST", "/scheduler/filter", fullNodeArgs(1));
  CHECK(full.status == 200);  // filter reports errors in its Error field
  CHECK(contains(full.body, "full Node objects refused"));
  CHECK(contains(full.body, "nodeCacheCapable: true"));
  CHECK(httpRequest(ext.port(), "POST", "/scheduler/prioritize", fullNodeArgs(1)).status == 400);

  const auto many =
      httpRequest(ext.port(), "POST", "/scheduler/filter", namesArgs({"dgx1", "pcie4", "gfd"}));
  CHECK(contains(many.body, "more than 2 nodes"));
  const auto two =
      httpRequest(ext.port(), "POST", "/scheduler/filter", namesArgs({"dgx1", "pcie4"}));
  CHECK(contains(two.body, R"("NodeNames":["dgx1","pcie4"])"));
}

TEST_CASE("At the open-file limit accept pauses and resumes; open connections are still served") {
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
  rlimit low = saved;
  low.rlim_cur = 64;  // inherited by the extender only: restored right after the start
  REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
  ExtenderProcess ext({});
  ::setrlimit(RLIMIT_NOFILE, &saved);
  REQUIRE(ext.running());
  auto first = servedConnection(ext.port());
  REQUIRE(first);
  std::vector<std::unique_ptr<HttpConnection>> flood;
  for (int i = 0; i < 100; ++i)
    flood.push_back(std::make_unique<HttpConnection>(ext.port()));
  bool backedOff = false;
  for (int i = 0; i < 500 && !backedOff; ++i) {
    backedOff = contains(ext.log(), "accept failed; retrying shortly");
    if (!backedOff) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(backedOff);
  CHECK(first->request("GET", "/healthz").status == 200);
  flood.clear();
  CHECK(servedConnection(ext.port()) != nullptr);
  CHECK(ext.running());
}
