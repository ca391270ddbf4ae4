// /healthz and /metrics of the agent, over a real loopback socket: healthy only after a
// successful pass, the last error in the 503 body, the counters in the Prometheus text format.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "agent/agent_http.h"
#include "support/free_port.h"

namespace gte::agent {
namespace {

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

// One HTTP/1.0 GET; the whole response (status line, headers, body).
std::string httpGet(std::uint16_t port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  REQUIRE(::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size()));
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;) {
    response.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return response;
}

std::int64_t nowUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TEST_CASE("healthz follows the passes, metrics count them", "[agent][http]") {
  AgentMetrics metrics;
  const std::uint16_t port = testing::freePort();
  AgentHttp http("127.0.0.1:" + std::to_string(port), metrics, std::chrono::seconds(90));
  REQUIRE(http.start().ok());

  CHECK_THAT(httpGet(port, "/healthz"), StartsWith("HTTP/1.1 503"));
  metrics.discoveryFailed("cannot load libnvidia-ml.so.1 (no such file)", true);
  const std::string failing = httpGet(port, "/healthz");
  CHECK_THAT(failing, StartsWith("HTTP/1.1 503"));
  CHECK_THAT(failing, ContainsSubstring("not healthy: cannot load libnvidia-ml.so.1"));

  metrics.passSucceeded(nowUnix());
  metrics.labelsWritten();
  CHECK_THAT(httpGet(port, "/healthz"), StartsWith("HTTP/1.1 200"));
  const std::string exposition = httpGet(port, "/metrics");
  CHECK_THAT(exposition, ContainsSubstring("gte_agent_label_writes_total 1\n"));
  CHECK_THAT(exposition, ContainsSubstring("gte_agent_nvml_errors_total 1\n"));
  CHECK_THAT(exposition, ContainsSubstring("gte_agent_discovery_errors_total 1\n"));
  CHECK_THAT(exposition,
             ContainsSubstring("# TYPE gte_agent_last_success_timestamp_seconds gauge\n"));
  CHECK_THAT(httpGet(port, "/nope"), StartsWith("HTTP/1.1 404"));
  http.stop();
}

TEST_CASE("a port in use is an error, not a crash", "[agent][http]") {
  AgentMetrics metrics;
  const std::uint16_t port = testing::freePort();
  AgentHttp first("127.0.0.1:" + std::to_string(port), metrics, std::chrono::seconds(90));
  REQUIRE(first.start().ok());
  AgentHttp second("127.0.0.1:" + std::to_string(port), metrics, std::chrono::seconds(90));
  const Status status = second.start();
  REQUIRE_FALSE(status.ok());
  CHECK_THAT(status.error().message, StartsWith("listen on 127.0.0.1:"));
}

}  // namespace
}  // namespace gte::agent
