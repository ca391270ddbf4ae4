// NVML health end to end through the real dlopen path against the fake libnvidia-ml.so.1, whose
// health facts each test writes to a control file (GTE_FAKE_NVML_HEALTH): passes of
// NvmlHealthSource with a test clock produce the labels the agent publishes (`health`, `nvlh`).
// Also the NVML calls one pass makes on an 8-GPU node.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "agent/nvml_health.h"
#include "agent/publishable_labels.h"
#include "policy/default_policy.h"

namespace gte::agent {
namespace {

using Catch::Matchers::ContainsSubstring;
using namespace std::chrono_literals;

const std::string kFakeNvml = std::string(GTE_FAKE_NVML_DIR) + "/libnvidia-ml.so.1";

class Machine {
 public:
  explicit Machine(const char* name, LinkHealthSettings settings = {2, 100, 3600s})
      : control_(std::filesystem::temp_directory_path() /
                 ("gte-fake-nvml-health-" + std::string(name) + "-" +
                  std::to_string(::getpid()))),  // ctest -j runs test cases side by side
        source_(kFakeNvml, settings, {}, [this] { return now_; }) {
    ::setenv("GTE_FAKE_NVML_MACHINE", name, 1);
    ::setenv("GTE_FAKE_NVML_HEALTH", control_.c_str(), 1);
    facts("");
  }
  ~Machine() {
    ::unsetenv("GTE_FAKE_NVML_HEALTH");
    std::filesystem::remove(control_);
  }
  void facts(const std::string& text) { std::ofstream(control_) << text; }
  StringMap pass(HealthClock::duration after = 1min) {
    now_ += after;
    auto discovery = source_.discover();
    REQUIRE(discovery.ok());
    last_ = *discovery;
    auto labels = publishableLabels(*discovery, 1764670000, defaultPolicy());
    REQUIRE(labels.ok());
    return *labels;
  }
  NvmlHealthSource& source() { return source_; }
  const Discovery& last() const { return last_; }

 private:
  std::filesystem::path control_;
  HealthClock::time_point now_{};
  NvmlHealthSource source_;
  Discovery last_;
};

std::string label(const StringMap& labels, const std::string& key) {
  const auto it = labels.find("gputopo.dev/" + key);
  return it == labels.end() ? "<none>" : it->second;
}

// The 28 pairs of 8 GPUs with `marks` at the given pairs, '1' elsewhere.
std::string nvlh(std::initializer_list<std::pair<std::pair<int, int>, char>> marks) {
  std::string out(28, '1');
  for (const auto& [pair, mark] : marks) {
    out[static_cast<std::size_t>(pairIndex(pair.first, pair.second, 8))] = mark;
  }
  return out;
}

TEST_CASE("NVML health: HGX H100, a recovering NVSwitch link degrades every pair of its GPU",
          "[agent][nvml][health]") {
  Machine m("hgx-h100");
  auto labels = m.pass();
  CHECK(label(labels, "health") == "11101111");  // GPU 3 row remap failure, GPU 7 MIG pending
  CHECK(label(labels, "nvlh") == "<none>");
  m.facts("recovery 2 0 5\n");
  labels = m.pass();
  CHECK(label(labels, "health") == "11101111");
  // GPU 3 is unhealthy but its NVLinks are fine; GPU 7 (MIG pending) still counts NVLinks.
  CHECK(label(labels, "nvlh") == nvlh({{{0, 2}, 'd'},
                                       {{1, 2}, 'd'},
                                       {{2, 3}, 'd'},
                                       {{2, 4}, 'd'},
                                       {{2, 5}, 'd'},
                                       {{2, 6}, 'd'},
                                       {{2, 7}, 'd'}}));
  CHECK_THAT(m.source().renderMetrics(),
             ContainsSubstring("gte_agent_nvlink_errors_total{gpu=\"2\",link=\"0\",counter="
                               "\"recovery\"} 5"));
  CHECK_THAT(m.source().renderMetrics(),
             ContainsSubstring("gte_agent_nvlink_error_rate_per_hour{gpu=\"2\",link=\"0\","
                               "counter=\"recovery\"} 5"));
  // An hour later the rise has left the window.
  labels = m.pass(61min);
  CHECK(label(labels, "nvlh") == "<none>");
}

TEST_CASE("NVML health: HGX H100, a GPU that lost an NVSwitch link is cut off and degraded",
          "[agent][nvml][health]") {
  Machine m("hgx-h100");
  m.pass();
  m.facts("linkdown 5 17\n");
  const auto labels = m.pass();
  CHECK(label(labels, "health") == "11101d11");
  CHECK(label(labels, "nvlh") == nvlh({{{0, 5}, '0'},
                                       {{1, 5}, '0'},
                                       {{2, 5}, '0'},
                                       {{3, 5}, '0'},
                                       {{4, 5}, '0'},
                                       {{5, 6}, '0'},
                                       {{5, 7}, '0'}}));
}

TEST_CASE("NVML health: DGX-1V, a mesh link down marks its pair 0; replays degrade one pair",
          "[agent][nvml][health]") {
  Machine m("dgx1v");
  m.pass();
  // GPU 0's links in the fake's order: 0-1, 0-2, 0-3, 0-3, 0-4, 0-4. Link 1 (to GPU 2) goes
  // down; GPU 4 link 0 (to GPU 0) replays 150 times.
  m.facts("linkdown 0 1\nreplay 4 0 150\n");
  const auto labels = m.pass();
  CHECK(label(labels, "nvlh") == nvlh({{{0, 2}, '0'}, {{0, 4}, 'd'}}));
  CHECK(label(labels, "health") == "11111011");
}

TEST_CASE("NVML health: XIDs, PCIe width and clocks set per-GPU health", "[agent][nvml][health]") {
  Machine m("dgx-a100-mig");
  CHECK(label(m.pass(), "health") == "11111111");
  REQUIRE(m.source().watchingXids());
  m.facts("xid 1 79\nxid 2 13\nxid 4 94\nwidth 6 8 16\nclocks 7 128\n");
  auto labels = m.pass();
  CHECK(label(labels, "health") == "1011d1dd");
  // XIDs are delivered once; the failed mark stays, the degraded one for the window.
  labels = m.pass(30min);
  CHECK(label(labels, "health") == "1011d1dd");
  m.facts("xid 1 79\nxid 2 13\nxid 4 94\n");
  labels = m.pass(31min);
  CHECK(label(labels, "health") == "10111111");
  CHECK_THAT(m.source().renderMetrics(),
             ContainsSubstring("gte_agent_xid_events_total{gpu=\"4\",xid=\"94\","
                               "action=\"degraded\"} 1"));
}

TEST_CASE("NVML health: the NVML calls of one pass on an 8-GPU node", "[agent][nvml][health]") {
  Machine m("hgx-h100");
  m.pass();
  void* fake = dlopen(kFakeNvml.c_str(), RTLD_NOW | RTLD_NOLOAD);
  REQUIRE(fake != nullptr);
  const auto calls = reinterpret_cast<unsigned long long (*)()>(dlsym(fake, "gteFakeNvmlCalls"));
  REQUIRE(calls != nullptr);
  const unsigned long long before = calls();
  m.pass();
  const unsigned long long perPass = calls() - before;
  // 8 GPUs x 18 links x (state, remote PCI, remote type, 4 error counters) = 1008, plus the
  // per-GPU calls (identity, NUMA, ancestors, MIG, memory health, PCIe, clocks, ECC) and the
  // event drain: docs/agent.md states the figure. Its CPU time: bench/bench_agent_health.
  CHECK(perPass > 1008);
  CHECK(perPass < 1400);
  dlclose(fake);
}

}  // namespace
}  // namespace gte::agent
