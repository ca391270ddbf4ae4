// The publishing loop against a scripted API server (FakeTransport): writes only on change, at most
// once per min-interval, `gen` = discovery time, nothing written when discovery fails or the API
// server is down (and the error is exposed), and --cleanup removes the agent's labels only.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <sstream>

#include "agent/agent_loop.h"
#include "agent/node_publisher.h"
#include "kube/fake_transport.h"
#include "policy/default_policy.h"

namespace gte::agent {
namespace {

using Catch::Matchers::ContainsSubstring;
using namespace std::chrono_literals;

// A tiny API server: one Node whose labels PATCH merges into.
struct FakeNodeServer {
  StringMap labels = {{"kubernetes.io/hostname", "n1"}};
  StringMap annotations;  // the operator's (cordons); PATCH never touches them
  bool down = false;
  // The device plugin's configuration ConfigMap gpu-operator/dp-config: its JSON body, or an API
  // failure while `configMapDown`.
  std::string configMap = "{}";
  bool configMapDown = false;
  testing::FakeTransport transport;

  FakeNodeServer() {
    transport.onSend = [this](const testing::RecordedRequest& r) -> Result<kube::HttpResponse> {
      if (down) {
        return Error{ErrorCode::kUnavailable, "connection refused"};
      }
      if (r.path == "/api/v1/namespaces/gpu-operator/configmaps/dp-config") {
        if (configMapDown) return kube::HttpResponse{503, R"({"message":"etcd timeout"})"};
        return kube::HttpResponse{200, configMap};
      }
      if (r.path != "/api/v1/nodes/n1") {
        return kube::HttpResponse{404, "{}"};
      }
      if (r.method == "PATCH") {
        applyMergePatch(r.body);
      }
      std::string body = R"({"metadata":{"name":"n1","labels":{)";
      bool first = true;
      for (const auto& [k, v] : labels) {
        if (!first) body.append(",");
        body.append("\"").append(k).append("\":\"").append(v).append("\"");
        first = false;
      }
      body.append("},\"annotations\":{");
      first = true;
      for (const auto& [k, v] : annotations) {
        if (!first) body.append(",");
        body.append("\"").append(k).append("\":\"").append(v).append("\"");
        first = false;
      }
      body.append("}}}");
      return kube::HttpResponse{200, body};
    };
  }

  // Enough of RFC 7386 for flat string/null label maps.
  void applyMergePatch(const std::string& body) {
    const std::string start = R"("labels":{)";
    std::size_t pos = body.find(start) + start.size();
    while (body[pos] == '"') {
      const std::size_t keyEnd = body.find('"', pos + 1);
      const std::string key = body.substr(pos + 1, keyEnd - pos - 1);
      pos = keyEnd + 2;  // past `":`
      if (body.compare(pos, 4, "null") == 0) {
        labels.erase(key);
        pos += 4;
      } else {
        const std::size_t valueEnd = body.find('"', pos + 1);
        labels.insert_or_assign(key, body.substr(pos + 1, valueEnd - pos - 1));
        pos = valueEnd + 1;
      }
      if (body[pos] == ',') ++pos;
    }
  }

  int patches() const {
    int n = 0;
    for (const auto& r : transport.requests())
      n += r.method == "PATCH";
    return n;
  }
};

Discovery twoGpus(const std::string& used) {
  Discovery d;
  d.topology = blankTopology(TopologySource::kLabelsV1, 2, MigMode::kNotCapable);
  d.topology.linksKnown = true;
  d.topology.nvlinks = {4};
  d.topology.pcie = {PcieLevel::kPhb};
  d.topology.numa = {0, 0};
  d.topology.fabric = "mesh";
  for (std::size_t i = 0; i < 2; ++i) {
    d.topology.used[i] = used[i] == '1' ? GpuUse::kAllocated : GpuUse::kFree;
  }
  return d;
}

struct Harness {
  FakeNodeServer server;
  NodePublisher publisher{server.transport, "n1", "gputopo.dev/"};
  AgentMetrics metrics;
  std::ostringstream dryRun;
  std::string used = "00";
  bool discoveryFails = false;
  AgentLoop loop{[this]() -> Result<Discovery> {
                   if (discoveryFails) {
                     return Error{ErrorCode::kUnavailable, "nvmlInit_v2: Driver Not Loaded (9)"};
                   }
                   return twoGpus(used);
                 },
                 nullptr,
                 &publisher,
                 defaultPolicy(),
                 AgentLoop::Settings{10s, true},
                 metrics,
                 dryRun};
};

const Clock::time_point kT0 = Clock::time_point(std::chrono::seconds(1764670000));

TEST_CASE("first pass writes every label with gen = discovery time", "[agent][loop]") {
  Harness h;
  const PassOutcome out = h.loop.pass(kT0);
  CHECK(out.ok);
  CHECK(out.wrote);
  CHECK(h.server.labels.at("gputopo.dev/gen") == "1764670000");
  CHECK(h.server.labels.at("gputopo.dev/nvl") == "4");
  CHECK(h.server.labels.at("gputopo.dev/used") == "00");
  CHECK(h.server.labels.at("kubernetes.io/hostname") == "n1");  // other labels untouched
  CHECK(h.metrics.writes() == 1);
  CHECK(h.metrics.lastSuccess() == 1764670000);
}

TEST_CASE("no write while nothing but the time changes", "[agent][loop]") {
  Harness h;
  h.loop.pass(kT0);
  const PassOutcome out = h.loop.pass(kT0 + 30s);
  CHECK(out.ok);
  CHECK_FALSE(out.wrote);
  CHECK(h.server.patches() == 1);
  CHECK(h.server.labels.at("gputopo.dev/gen") == "1764670000");
}

TEST_CASE("a change within min-interval waits, then is written", "[agent][loop]") {
  Harness h;
  h.loop.pass(kT0);
  h.used = "01";
  const PassOutcome early = h.loop.pass(kT0 + 3s);
  CHECK_FALSE(early.wrote);
  REQUIRE(early.retryAt);
  CHECK(*early.retryAt == kT0 + 10s);
  CHECK(h.server.labels.at("gputopo.dev/used") == "00");
  const PassOutcome later = h.loop.pass(kT0 + 10s);
  CHECK(later.wrote);
  CHECK(h.server.labels.at("gputopo.dev/used") == "01");
  CHECK(h.server.labels.at("gputopo.dev/gen") == "1764670010");
  CHECK(h.server.patches() == 2);
}

TEST_CASE("failed discovery writes nothing and is exposed", "[agent][loop]") {
  Harness h;
  h.loop.pass(kT0);
  h.discoveryFails = true;
  const PassOutcome out = h.loop.pass(kT0 + 30s);
  CHECK_FALSE(out.ok);
  CHECK(h.server.patches() == 1);
  CHECK(h.server.labels.at("gputopo.dev/used") == "00");
  CHECK(h.metrics.discoveryErrors() == 1);
  CHECK(h.metrics.nvmlErrors() == 1);
  CHECK_THAT(h.metrics.lastError(), ContainsSubstring("Driver Not Loaded"));
  CHECK_THAT(h.metrics.render(), ContainsSubstring("gte_agent_nvml_errors_total 1\n"));
}

TEST_CASE("API server down: keeps running, counts, writes once it is back", "[agent][loop]") {
  Harness h;
  h.server.down = true;
  const PassOutcome down = h.loop.pass(kT0);
  CHECK_FALSE(down.ok);
  CHECK(h.metrics.apiErrors() == 1);
  CHECK_FALSE(h.metrics.healthy(1764670000, 90));
  CHECK_THAT(h.metrics.lastError(), ContainsSubstring("connection refused"));
  h.server.down = false;
  const PassOutcome back = h.loop.pass(kT0 + 30s);
  CHECK(back.wrote);
  CHECK(h.metrics.healthy(1764670030, 90));
  CHECK(h.server.labels.count("gputopo.dev/v") == 1);
}

TEST_CASE("labels the agent no longer produces are removed", "[agent][loop]") {
  Harness h;
  h.server.labels.insert_or_assign("gputopo.dev/mig1",
                                   std::string("00f"));  // left by an earlier layout
  h.loop.pass(kT0);
  CHECK(h.server.labels.count("gputopo.dev/mig1") == 0);
}

TEST_CASE("cleanup removes the prefix's labels only", "[agent][loop]") {
  Harness h;
  h.loop.pass(kT0);
  auto removed = h.publisher.cleanup();
  REQUIRE(removed.ok());
  CHECK(*removed);
  CHECK(h.server.labels == StringMap{{"kubernetes.io/hostname", "n1"}});
  auto again = h.publisher.cleanup();
  REQUIRE(again.ok());
  CHECK_FALSE(*again);
}

TEST_CASE("cordon annotations are merged into health and nvlh; malformed ones counted",
          "[agent][loop][cordon]") {
  Harness h;
  h.loop.pass(kT0);
  CHECK(h.server.labels.at("gputopo.dev/health") == "11");
  CHECK(h.server.labels.count("gputopo.dev/nvlh") == 0);
  h.server.annotations = {{"gputopo.dev/cordoned-gpus", "1,7,x"},
                          {"gputopo.dev/cordoned-links", "0-1"}};
  const PassOutcome out = h.loop.pass(kT0 + 30s);
  CHECK(out.wrote);
  CHECK(h.server.labels.at("gputopo.dev/health") == "1c");
  CHECK(h.server.labels.at("gputopo.dev/nvlh") == "c");
  CHECK(h.server.annotations.size() == 2);  // never written by the agent
  CHECK(h.metrics.cordonErrors() == 2);     // '7' (2 GPUs) and 'x'
  CHECK_THAT(h.metrics.render(), ContainsSubstring("gte_agent_cordon_annotation_errors_total 2\n"));
  h.loop.pass(kT0 + 60s);
  CHECK(h.metrics.cordonErrors() == 2);  // the same entries: counted once
  h.server.annotations.clear();
  h.loop.pass(kT0 + 90s);
  CHECK(h.server.labels.at("gputopo.dev/health") == "11");
  CHECK(h.server.labels.count("gputopo.dev/nvlh") == 0);
}

TEST_CASE("the device plugin's configuration becomes labels-v1 sharing", "[agent][loop][sharing]") {
  Harness h;
  DevicePluginConfigSource source(h.server.transport, "gpu-operator", "dp-config", "");
  h.loop.setSharingSource(&source);
  // Two configs; the node's label picks the strict one (JSON-escaped YAML, as the API serves it).
  h.server.configMap = R"({"data":{)"
                       R"("ts4":"version: v1\nsharing:\n  timeSlicing:\n    resources:\n    )"
                       R"(- name: nvidia.com/gpu\n      replicas: 4\n",)"
                       R"("ts4-strict":"version: v1\nsharing:\n  timeSlicing:\n    )"
                       R"(failRequestsGreaterThanOne: true\n    resources:\n    )"
                       R"(- name: nvidia.com/gpu\n      replicas: 4\n"}})";
  h.server.labels.insert_or_assign("nvidia.com/device-plugin.config", "ts4-strict");
  REQUIRE(h.loop.pass(kT0).wrote);
  CHECK(h.server.labels.at("gputopo.dev/sharing") == "time-slicing.4.f");

  // An API failure keeps the last reading: the plugin runs with what it loaded.
  h.server.configMapDown = true;
  CHECK(h.loop.pass(kT0 + 30s).ok);
  CHECK(h.server.labels.at("gputopo.dev/sharing") == "time-slicing.4.f");
  CHECK(h.metrics.apiErrors() == 1);
  h.server.configMapDown = false;

  // The operator moves the node to the other config.
  h.server.labels.insert_or_assign("nvidia.com/device-plugin.config", "ts4");
  REQUIRE(h.loop.pass(kT0 + 60s).wrote);
  CHECK(h.server.labels.at("gputopo.dev/sharing") == "time-slicing.4");

  // A config name the ConfigMap does not hold: nothing is claimed, counted, logged once.
  h.server.labels.insert_or_assign("nvidia.com/device-plugin.config", "mps2");
  REQUIRE(h.loop.pass(kT0 + 90s).wrote);
  CHECK(h.server.labels.count("gputopo.dev/sharing") == 0);
  CHECK(h.metrics.devicePluginConfigErrors() == 1);
  CHECK_THAT(h.metrics.render(),
             ContainsSubstring("gte_agent_device_plugin_config_errors_total 1\n"));
}

TEST_CASE("dry run prints changed labels instead of writing", "[agent][loop]") {
  AgentMetrics metrics;
  std::ostringstream out;
  AgentLoop loop([] { return Result<Discovery>(twoGpus("10")); }, nullptr, nullptr, defaultPolicy(),
                 AgentLoop::Settings{10s, true}, metrics, out);
  CHECK(loop.pass(kT0).wrote);
  CHECK_THAT(out.str(), ContainsSubstring("gputopo.dev/used=10\n"));
  CHECK_FALSE(loop.pass(kT0 + 30s).wrote);
  CHECK(metrics.writes() == 0);
}

}  // namespace
}  // namespace gte::agent
