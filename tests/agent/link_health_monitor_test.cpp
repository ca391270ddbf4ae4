// NVLink health as pure logic: windowed rates against thresholds, counter resets, links going down
// on a direct mesh and on an NVSwitch fabric, and how a link maps to GPU pairs.
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>

#include "agent/link_health_monitor.h"

namespace gte::agent {
namespace {

using namespace std::chrono_literals;
const HealthClock::time_point kT0{};

// n GPUs; GPU 0 link 0 goes straight to GPU 1 (and back), no other links.
HealthSample meshPair(int n, std::uint64_t recovery0, std::uint64_t replay0 = 0,
                      bool active = true) {
  HealthSample s;
  s.present = true;
  s.gpus.resize(static_cast<std::size_t>(n));
  LinkSample a;
  a.active = active;
  a.peerGpu = active ? 1 : -1;
  if (active) {
    a.recovery = recovery0;
    a.replay = replay0;
  }
  LinkSample b;
  b.active = true;
  b.peerGpu = 0;
  b.recovery = 0;
  b.replay = 0;
  s.gpus[0].links = {a};
  s.gpus[1].links = {b};
  return s;
}

std::vector<std::uint8_t> nvlinks(int n, std::uint8_t each) {
  return std::vector<std::uint8_t>(static_cast<std::size_t>(pairCount(n)), each);
}

// n GPUs with `links` active switch links each, counters 0.
HealthSample fabric(int n, int links) {
  HealthSample s;
  s.present = true;
  s.gpus.resize(static_cast<std::size_t>(n));
  for (auto& gpu : s.gpus) {
    for (int l = 0; l < links; ++l) {
      LinkSample link;
      link.active = true;
      link.toSwitch = true;
      link.recovery = 0;
      link.replay = 0;
      gpu.links.push_back(link);
    }
  }
  return s;
}

TEST_CASE("link health: a recovery rate at the threshold within the window degrades the pair",
          "[agent][health]") {
  LinkHealthMonitor monitor(LinkHealthSettings{2, 100, 3600s});
  const auto n = 3;
  // The first pass is the baseline: counts from before the agent started are not rates.
  auto v = monitor.update(meshPair(n, 500), nvlinks(n, 1), kT0);
  CHECK(v.pairs[pairIndex(0, 1, n)] == LinkHealth::kOk);
  v = monitor.update(meshPair(n, 501), nvlinks(n, 1), kT0 + 10min);
  CHECK(monitor.rate(0, 0, LinkCounter::kRecovery) == Catch::Approx(1.0));
  CHECK(v.pairs[pairIndex(0, 1, n)] == LinkHealth::kOk);  // 1/h, below 2/h
  v = monitor.update(meshPair(n, 502), nvlinks(n, 1), kT0 + 20min);
  CHECK(monitor.rate(0, 0, LinkCounter::kRecovery) == Catch::Approx(2.0));
  CHECK(v.pairs[pairIndex(0, 1, n)] == LinkHealth::kDegraded);
  CHECK(v.pairs[pairIndex(0, 2, n)] == LinkHealth::kOk);
  CHECK(v.pairs[pairIndex(1, 2, n)] == LinkHealth::kOk);
  REQUIRE(!v.reasons[0].empty());
  CHECK(v.reasons[0][0].find("recovery") != std::string::npos);
  // The rise at 10 min leaves the window at 70 min: 1/h again, fine.
  v = monitor.update(meshPair(n, 502), nvlinks(n, 1), kT0 + 70min);
  CHECK(monitor.rate(0, 0, LinkCounter::kRecovery) == Catch::Approx(1.0));
  CHECK(v.pairs[pairIndex(0, 1, n)] == LinkHealth::kOk);
  v = monitor.update(meshPair(n, 502), nvlinks(n, 1), kT0 + 81min);
  CHECK(monitor.rate(0, 0, LinkCounter::kRecovery) == Catch::Approx(0.0));
}

TEST_CASE("link health: the window is the divisor; replay threshold; 0 turns a check off",
          "[agent][health]") {
  LinkHealthMonitor monitor(LinkHealthSettings{0, 100, 1800s});  // 30 min window
  const auto n = 2;
  monitor.update(meshPair(n, 0, 0), nvlinks(n, 2), kT0);
  auto v = monitor.update(meshPair(n, 1000, 49), nvlinks(n, 2), kT0 + 1min);
  CHECK(monitor.rate(0, 0, LinkCounter::kReplay) == Catch::Approx(98.0));  // 49 per half hour
  CHECK(v.pairs[0] == LinkHealth::kOk);  // recovery check is off, replay below 100/h
  v = monitor.update(meshPair(n, 1000, 50), nvlinks(n, 2), kT0 + 2min);
  CHECK(v.pairs[0] == LinkHealth::kDegraded);
}

TEST_CASE("link health: a counter going backwards (driver reload) is a reset, not a negative rate",
          "[agent][health]") {
  LinkHealthMonitor monitor(LinkHealthSettings{2, 100, 3600s});
  const auto n = 2;
  monitor.update(meshPair(n, 100), nvlinks(n, 1), kT0);
  auto v = monitor.update(meshPair(n, 0), nvlinks(n, 1), kT0 + 1min);
  CHECK(monitor.rate(0, 0, LinkCounter::kRecovery) == Catch::Approx(0.0));
  CHECK(v.pairs[0] == LinkHealth::kOk);
  v = monitor.update(meshPair(n, 1), nvlinks(n, 1), kT0 + 2min);
  CHECK(monitor.rate(0, 0, LinkCounter::kRecovery) == Catch::Approx(1.0));
  // Reset again to a smaller value than before: what it holds now is new.
  monitor.update(meshPair(n, 100), nvlinks(n, 1), kT0 + 3min);
  v = monitor.update(meshPair(n, 3), nvlinks(n, 1), kT0 + 4min);
  CHECK(monitor.rate(0, 0, LinkCounter::kRecovery) == Catch::Approx(1.0 + 99.0 + 3.0));
  CHECK(v.pairs[0] == LinkHealth::kDegraded);
}

TEST_CASE("link health: a mesh link that was active and is now down marks its pair 0",
          "[agent][health]") {
  LinkHealthMonitor monitor(LinkHealthSettings{});
  const auto n = 3;
  auto v = monitor.update(meshPair(n, 0), nvlinks(n, 1), kT0);
  CHECK(v.pairs[pairIndex(0, 1, n)] == LinkHealth::kOk);
  v = monitor.update(meshPair(n, 0, 0, false), nvlinks(n, 1), kT0 + 1min);
  CHECK(v.pairs[pairIndex(0, 1, n)] == LinkHealth::kDown);
  CHECK(v.pairs[pairIndex(0, 2, n)] == LinkHealth::kOk);
  CHECK_FALSE(v.gpuDegraded[0]);
  // A link never seen active is not down: it is just not there.
  LinkHealthMonitor fresh(LinkHealthSettings{});
  v = fresh.update(meshPair(n, 0, 0, false), nvlinks(n, 1), kT0);
  CHECK(v.pairs[pairIndex(0, 1, n)] == LinkHealth::kOk);
  // Down beats degraded.
  CHECK(worseLink(LinkHealth::kDegraded, LinkHealth::kDown) == LinkHealth::kDown);
  CHECK(worseLink(LinkHealth::kDown, LinkHealth::kOk) == LinkHealth::kDown);
}

TEST_CASE("link health: NVSwitch, a GPU with fewer active links than its peers is cut off",
          "[agent][health]") {
  LinkHealthMonitor monitor(LinkHealthSettings{});
  const int n = 4;
  auto v = monitor.update(fabric(n, 18), nvlinks(n, 18), kT0);
  for (const auto pair : v.pairs) {
    CHECK(pair == LinkHealth::kOk);
  }
  HealthSample s = fabric(n, 18);
  s.gpus[2].links[5].active = false;
  v = monitor.update(s, nvlinks(n, 18), kT0 + 1min);
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      INFO(i << "-" << j);
      CHECK(v.pairs[pairIndex(i, j, n)] ==
            (i == 2 || j == 2 ? LinkHealth::kDown : LinkHealth::kOk));
    }
  }
  CHECK(v.gpuDegraded == std::vector<bool>{false, false, true, false});
  // Every GPU lost a link (a switch tray): each has fewer than it had, all cut off.
  HealthSample all = fabric(n, 17);
  v = monitor.update(all, nvlinks(n, 17), kT0 + 2min);
  CHECK(v.gpuDegraded == std::vector<bool>{true, true, true, true});
  // A monitor that starts on a node already short compares with the peers only.
  LinkHealthMonitor fresh(LinkHealthSettings{});
  v = fresh.update(all, nvlinks(n, 17), kT0);
  CHECK(v.gpuDegraded == std::vector<bool>{false, false, false, false});
}

TEST_CASE("link health: NVSwitch, a degraded link marks every NVLink pair of its GPU",
          "[agent][health]") {
  LinkHealthMonitor monitor(LinkHealthSettings{2, 100, 3600s});
  const int n = 4;
  auto links = nvlinks(n, 18);
  links[pairIndex(1, 3, n)] = 0;  // GPU 1 and 3 share no NVLink (say, one in MIG mode)
  monitor.update(fabric(n, 18), links, kT0);
  HealthSample s = fabric(n, 18);
  s.gpus[1].links[7].recovery = 3;
  auto v = monitor.update(s, links, kT0 + 1min);
  CHECK(v.pairs[pairIndex(0, 1, n)] == LinkHealth::kDegraded);
  CHECK(v.pairs[pairIndex(1, 2, n)] == LinkHealth::kDegraded);
  CHECK(v.pairs[pairIndex(1, 3, n)] == LinkHealth::kOk);
  CHECK(v.pairs[pairIndex(0, 2, n)] == LinkHealth::kOk);
  CHECK(v.pairs[pairIndex(2, 3, n)] == LinkHealth::kOk);
  CHECK_FALSE(v.gpuDegraded[1]);
}

TEST_CASE("link health: a changed GPU count starts over", "[agent][health]") {
  LinkHealthMonitor monitor(LinkHealthSettings{});
  monitor.update(meshPair(3, 0), nvlinks(3, 1), kT0);
  auto v = monitor.update(meshPair(2, 0, 0, false), nvlinks(2, 1), kT0 + 1min);
  CHECK(v.pairs.size() == 1);
  CHECK(v.pairs[0] == LinkHealth::kOk);  // no memory of the 3-GPU node's links
}

}  // namespace
}  // namespace gte::agent
