// The drain period after SIGTERM (docs/operations.md, "Graceful shutdown"), with traffic running as
// kube-scheduler sends it: keep-alive connections, each POSTing filter requests one after another.
// kube-scheduler does not retry a POST, so a request whose connection the server closes before
// answering it is a failed scheduling attempt: the cases below count every request sent and every
// full answer, and require them to be equal.
#include <signal.h>

#include <atomic>
#include <catch2/catch_test_macros.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "extender_process.h"
#include "http_test_client.h"

using gte::testing::ExtenderProcess;
using gte::testing::HttpConnection;
using gte::testing::httpRequest;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kClusterFile = std::string(GTE_SOURCE_DIR) + "/tests/golden/cluster.yaml";
// A names-mode filter request (the chart's mode) for a 1-GPU pod over two nodes of the cluster
// file.
const std::string kFilterBody =
    R"({"Pod":{"metadata":{"name":"train-0","namespace":"ml","uid":"u-1"},"spec":{"containers":[)"
    R"({"name":"main","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}},"Nodes":null,)"
    R"("NodeNames":["dgx1","pcie4"]})";
constexpr auto kDrainPeriod = std::chrono::seconds(2);
constexpr auto kShutdownGrace = std::chrono::seconds(5);
// How long after SIGTERM the Service still routes new connections to the pod (endpoints and
// kube-proxy updating) when there is no preStop sleep.
constexpr auto kEndpointLag = std::chrono::milliseconds(300);

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

ExtenderProcess drainingExtender() {
  return ExtenderProcess(
      {"--cluster-file", kClusterFile, "--drain-period", "2s", "--shutdown-grace", "5s"});
}

// One kube-scheduler connection as Go's http.Transport drives it: requests one after another on
// the open connection; after an answer with `Connection: close` (or a lost one) a new connection is
// dialled through the Service, which reaches this pod until `serviceMoved` and another replica
// after it (the client then has nothing more to send here and ends).
struct SchedulerClient {
  std::atomic<int> sent{0};
  std::atomic<int> answered{0};  // 200 with a filter result
  std::atomic<int> lost{0};  // the connection closed before the answer: "closed before response"
  std::atomic<int> toldToClose{0};  // answers carrying Connection: close
  std::atomic<int> refused{0};      // dials the pod refused while the Service still routed to it
  std::atomic<int> dialsDuringDrain{0};
};

void runClient(std::uint16_t port, SchedulerClient& c, const std::atomic<bool>& serviceMoved,
               const std::atomic<bool>& signalled, const std::atomic<bool>& giveUp) {
  std::unique_ptr<HttpConnection> conn;
  while (!giveUp) {
    if (!conn) {
      if (serviceMoved) return;
      conn = std::make_unique<HttpConnection>(port);
      if (signalled) ++c.dialsDuringDrain;
      if (!conn->connected()) {
        ++c.refused;
        return;
      }
    }
    ++c.sent;
    const auto r = conn->request("POST", "/scheduler/filter", kFilterBody);
    if (r.status == 0) {
      ++c.lost;
      conn.reset();
      continue;
    }
    if (r.status == 200 && contains(r.body, R"("NodeNames":[)")) ++c.answered;
    if (contains(r.headers, "Connection: close")) {
      ++c.toldToClose;
      conn.reset();
    }
    // Steady traffic, not a flood: the connection is idle between requests, which is when a
    // server that closes idle connections at SIGTERM loses the next one.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

// Four connections of steady filter traffic; `preStop`: the Service stops routing new connections
// to the pod kEndpointLag before SIGTERM (the chart's preStop sleep), else kEndpointLag after it.
void drainWithTraffic(bool preStop) {
  auto ext = drainingExtender();
  REQUIRE(ext.running());
  constexpr int kClients = 4;
  std::vector<SchedulerClient> clients(kClients);
  std::atomic<bool> serviceMoved{false};
  std::atomic<bool> signalled{false};
  std::atomic<bool> giveUp{false};
  // Keep-alive connections that stay idle across the signal: one sends a request in the middle of
  // the drain period, the other never again.
  HttpConnection late(ext.port());
  HttpConnection idle(ext.port());
  REQUIRE(late.request("GET", "/healthz").status == 200);
  REQUIRE(idle.request("GET", "/healthz").status == 200);

  std::vector<std::thread> threads;
  for (auto& c : clients) {
    threads.emplace_back([&] { runClient(ext.port(), c, serviceMoved, signalled, giveUp); });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // traffic is flowing
  if (preStop) {
    serviceMoved = true;
    std::this_thread::sleep_for(kEndpointLag);  // open connections keep sending meanwhile
  }
  ext.signal(SIGTERM);
  const auto signalledAt = Clock::now();
  signalled = true;
  if (!preStop) {
    std::this_thread::sleep_for(kEndpointLag);  // new connections still reach the pod meanwhile
    serviceMoved = true;
  }

  // Middle of the drain period: readiness fails, yet a new connection is accepted and answered.
  std::this_thread::sleep_until(signalledAt + kDrainPeriod / 2);
  const auto ready = httpRequest(ext.port(), "GET", "/readyz");
  CHECK(ready.status == 503);
  CHECK(contains(ready.body, "shutting down"));
  // The connection idle since before the signal is still open and gets its request answered.
  CHECK_FALSE(late.readable());
  const auto lateAnswer = late.request("POST", "/scheduler/filter", kFilterBody);
  CHECK(lateAnswer.status == 200);
  CHECK(contains(lateAnswer.body, R"("NodeNames":[)"));
  CHECK(contains(lateAnswer.headers, "Connection: close"));
  CHECK(late.waitClosed());

  // The other one is closed by the server only once the drain period is over.
  CHECK_FALSE(idle.readable());
  CHECK(idle.waitClosed());
  CHECK(Clock::now() - signalledAt >= kDrainPeriod);
  const int status = ext.waitExit();
  const auto exitedAfter = Clock::now() - signalledAt;
  giveUp = true;
  for (auto& t : threads)
    t.join();

  CHECK(status == 0);  // every connection finished before --shutdown-grace ran out
  CHECK(exitedAfter < kDrainPeriod + kShutdownGrace);
  int dialsDuringDrain = 0;
  for (const auto& c : clients) {
    CAPTURE(c.sent.load(), c.answered.load(), c.lost.load(), c.refused.load());
    CHECK(c.sent > 0);
    CHECK(c.lost == 0);
    CHECK(c.answered == c.sent);  // every request sent got a full 200 answer
    CHECK(c.toldToClose >= 1);    // and the client left because it was told to
    CHECK(c.refused == 0);
    dialsDuringDrain += c.dialsDuringDrain;
  }
  if (!preStop) {
    CHECK(dialsDuringDrain >= kClients);  // the connections dialled after the signal were served
  }
}

}  // namespace

TEST_CASE("SIGTERM with traffic running and no preStop: every request sent is answered") {
  drainWithTraffic(false);
}

TEST_CASE("SIGTERM after a preStop sleep with traffic running: every request sent is answered") {
  drainWithTraffic(true);
}

TEST_CASE("SIGINT stops without the drain period; a second SIGTERM cuts the drain short") {
  // A drain period longer than waitExit's 10 s: exiting at all shows it was skipped.
  {
    ExtenderProcess ext({"--drain-period", "60s"});
    REQUIRE(ext.running());
    HttpConnection idle(ext.port());
    REQUIRE(idle.request("GET", "/healthz").status == 200);
    ext.signal(SIGINT);
    CHECK(idle.waitClosed());
    CHECK(ext.waitExit() == 0);
  }
  {
    ExtenderProcess ext({"--drain-period", "60s"});
    REQUIRE(ext.running());
    ext.signal(SIGTERM);
    // Draining: readiness fails while the listener still accepts.
    bool draining = false;
    for (int i = 0; i < 250 && !draining; ++i) {
      draining = httpRequest(ext.port(), "GET", "/readyz").status == 503;
      if (!draining) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    REQUIRE(draining);
    ext.signal(SIGTERM);
    CHECK(ext.waitExit() == 0);
    CHECK(contains(ext.log(), "drain period cut short"));
  }
}
