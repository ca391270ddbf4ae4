// Per-GPU health from the pass samples: the XID table and how long an XID keeps its mark, PCIe
// width, clock event reasons, volatile uncorrectable ECC, the worst signal winning, and the
// operator's cordon annotations (parsed from the Node, malformed entries skipped and reported).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "agent/cordon_annotations.h"
#include "agent/health_monitor.h"
#include "agent/node_publisher.h"

namespace gte::agent {
namespace {

using Catch::Matchers::ContainsSubstring;
using namespace std::chrono_literals;
const HealthClock::time_point kT0{};

Discovery node(int n) {
  Discovery d;
  d.topology = blankTopology(TopologySource::kLabelsV1, n, MigMode::kNotCapable);
  d.topology.linksKnown = true;
  d.health.present = true;
  d.health.gpus.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    d.gpuUuids.push_back("GPU-" + std::to_string(i));
  }
  return d;
}

std::string codes(const HealthVerdict& v) {
  std::string out;
  for (const auto& gpu : v.gpus)
    out += healthCode(gpu.health);
  return out;
}

TEST_CASE("XID table: failed, degraded, the application's own, unknown", "[agent][health]") {
  for (const std::uint64_t xid : {13, 31, 43, 45, 68, 69, 8, 11}) {
    INFO(xid);
    CHECK(xidAction(xid) == XidAction::kIgnore);
  }
  for (const std::uint64_t xid : {48, 62, 64, 79, 95, 119, 120, 140}) {
    INFO(xid);
    CHECK(xidAction(xid) == XidAction::kFail);
  }
  for (const std::uint64_t xid : {61, 63, 74, 92, 94}) {
    INFO(xid);
    CHECK(xidAction(xid) == XidAction::kDegrade);
  }
  CHECK(xidAction(1) == XidAction::kUnknown);
  CHECK(xidAction(999) == XidAction::kUnknown);
}

TEST_CASE("XIDs: failed stays until restart, degraded for the window, ignored ones do nothing",
          "[agent][health]") {
  HealthMonitor monitor(LinkHealthSettings{2, 100, 3600s});
  Discovery d = node(4);
  d.health.gpus[0].xids = {13, 31, 43, 45};
  d.health.gpus[1].xids = {79};
  d.health.gpus[2].xids = {74};
  d.health.gpus[3].xids = {12345};
  CHECK(codes(monitor.evaluate(d, kT0)) == "10d1");
  Discovery later = node(4);
  CHECK(codes(monitor.evaluate(later, kT0 + 59min)) == "10d1");
  auto v = monitor.evaluate(later, kT0 + 61min);
  CHECK(codes(v) == "1011");
  REQUIRE(!v.gpus[1].reasons.empty());
  CHECK_THAT(v.gpus[1].reasons[0], ContainsSubstring("xid 79"));
  const std::string metrics = monitor.renderMetrics();
  CHECK_THAT(metrics, ContainsSubstring(
                          "gte_agent_xid_events_total{gpu=\"1\",xid=\"79\",action=\"failed\"} 1"));
  CHECK_THAT(metrics, ContainsSubstring(
                          "gte_agent_xid_events_total{gpu=\"0\",xid=\"13\",action=\"ignored\"} 1"));
  CHECK_THAT(metrics, ContainsSubstring("gte_agent_gpu_health{gpu=\"1\",state=\"failed\"} 1"));
  // Another GPU at index 1 (replaced): its predecessor's XID does not follow it.
  later.gpuUuids[1] = "GPU-replacement";
  CHECK(codes(monitor.evaluate(later, kT0 + 62min)) == "1111");
}

TEST_CASE("PCIe width, clock event reasons, ECC: degraded; worst signal wins", "[agent][health]") {
  HealthMonitor monitor(LinkHealthSettings{2, 100, 3600s});
  Discovery d = node(5);
  d.health.gpus[0].pcieWidth = 8;
  d.health.gpus[0].pcieMaxWidth = 16;
  d.health.gpus[1].pcieGen = 1;  // idle GPUs lower the generation: not a signal
  d.health.gpus[1].pcieMaxGen = 5;
  d.health.gpus[1].pcieWidth = 16;
  d.health.gpus[1].pcieMaxWidth = 16;
  d.health.gpus[2].clockEventReasons = 0x40;       // HW thermal slowdown
  d.health.gpus[3].clockEventReasons = 0x1 | 0x4;  // idle, SW power cap: normal
  d.health.gpus[4].eccUncorrectedVolatile = 7;     // baseline
  d.topology.health[0] = GpuHealth::kUnhealthy;    // discovery's own finding (remap pending)
  auto v = monitor.evaluate(d, kT0);
  CHECK(codes(v) == "01d11");  // 0 beats d on GPU 0
  d.topology.health[0] = GpuHealth::kHealthy;
  d.health.gpus[4].eccUncorrectedVolatile = 8;
  CHECK(codes(monitor.evaluate(d, kT0 + 1min)) == "d1d1d");
  d.health.gpus[0].pcieWidth = 16;
  d.health.gpus[2].clockEventReasons = 0;
  d.health.gpus[4].eccUncorrectedVolatile = 0;  // a reset cleared it: no rise
  CHECK(codes(monitor.evaluate(d, kT0 + 30min)) == "1111d");
  CHECK(codes(monitor.evaluate(d, kT0 + 62min)) == "11111");
}

TEST_CASE("applyHealth writes GPU health and linkHealth only where some pair is not fine",
          "[agent][health]") {
  HealthMonitor monitor(LinkHealthSettings{});
  Discovery d = node(3);
  auto v = monitor.evaluate(d, kT0);
  applyHealth(v, d.topology);
  CHECK(d.topology.linkHealth.empty());
  HealthVerdict bad;
  bad.gpus.resize(3);
  bad.gpus[2].health = GpuHealth::kDegraded;
  bad.pairs = {LinkHealth::kOk, LinkHealth::kDown, LinkHealth::kOk};
  d.topology.health[1] = GpuHealth::kUnhealthy;
  applyHealth(bad, d.topology);
  CHECK(d.topology.health ==
        std::vector<GpuHealth>{GpuHealth::kHealthy, GpuHealth::kUnhealthy, GpuHealth::kDegraded});
  CHECK(d.topology.linkHealth == bad.pairs);
}

TEST_CASE("cordon annotations: GPUs and pairs, whitespace, duplicates", "[agent][cordon]") {
  const StringMap annotations = {{"gputopo.dev/cordoned-gpus", "3, 5,3"},
                                 {"gputopo.dev/cordoned-links", "1-0 ,2-3"},
                                 {"other/cordoned-gpus", "1"}};
  const Cordons c = parseCordons(annotations, "gputopo.dev/", 8);
  CHECK(c.gpus == std::vector<int>{3, 5});
  CHECK(c.links == std::vector<std::pair<int, int>>{{0, 1}, {2, 3}});
  CHECK(c.errors.empty());
  CHECK(parseCordons({}, "gputopo.dev/", 8).gpus.empty());
  CHECK(parseCordons({{"gputopo.dev/cordoned-gpus", " "}}, "gputopo.dev/", 8).errors.empty());
}

TEST_CASE("cordon annotations: malformed entries are reported, the valid ones still apply",
          "[agent][cordon]") {
  const StringMap annotations = {{"gputopo.dev/cordoned-gpus", "1,x,8,-1,,2"},
                                 {"gputopo.dev/cordoned-links", "0-1,3-3,4,5-9,a-b,6-7-8,2-4"}};
  const Cordons c = parseCordons(annotations, "gputopo.dev/", 8);
  CHECK(c.gpus == std::vector<int>{1, 2});
  CHECK(c.links == std::vector<std::pair<int, int>>{{0, 1}, {2, 4}});
  CHECK(c.errors.size() == 4 + 5);
  CHECK_THAT(c.errors[0], ContainsSubstring("'x'"));
}

TEST_CASE("cordons beat every other state", "[agent][cordon]") {
  Discovery d = node(3);
  d.topology.health = {GpuHealth::kUnhealthy, GpuHealth::kDegraded, GpuHealth::kHealthy};
  Cordons c;
  c.gpus = {0, 1};
  c.links = {{1, 2}};
  applyCordons(c, d.topology);
  CHECK(d.topology.health ==
        std::vector<GpuHealth>{GpuHealth::kCordoned, GpuHealth::kCordoned, GpuHealth::kHealthy});
  CHECK(d.topology.linkHealth ==
        std::vector<LinkHealth>{LinkHealth::kOk, LinkHealth::kOk, LinkHealth::kCordoned});
  d.topology.linkHealth = {LinkHealth::kDown, LinkHealth::kOk, LinkHealth::kDown};
  applyCordons(c, d.topology);
  CHECK(d.topology.linkHealth ==
        std::vector<LinkHealth>{LinkHealth::kDown, LinkHealth::kOk, LinkHealth::kCordoned});
}

TEST_CASE("node annotations are read from the Node JSON", "[agent][cordon]") {
  auto a =
      nodeAnnotations(R"({"kind":"Node","metadata":{"name":"n1","labels":{"a":"b"},)"
                      R"("annotations":{"gputopo.dev/cordoned-gpus":"3,5","x":"y"}},"status":{}})");
  REQUIRE(a.ok());
  CHECK(*a == StringMap{{"gputopo.dev/cordoned-gpus", "3,5"}, {"x", "y"}});
  auto none = nodeAnnotations(R"({"metadata":{"name":"n1"}})");
  REQUIRE(none.ok());
  CHECK(none->empty());
  CHECK_FALSE(nodeAnnotations(R"({"metadata":{"annotations":{"a":)").ok());
}

}  // namespace
}  // namespace gte::agent
