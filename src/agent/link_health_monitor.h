#pragma once
// NVLink health from per-pass samples (docs/agent.md, Health): pure logic with the time passed in,
// so thresholds, windows and counter resets are unit-tested without NVML.
//
// Rates: every pass adds each counter's rise since the previous pass (a counter that went
// backwards, a driver reload, counts its new value as the rise: never negative) at the pass time;
// the rate is the sum of the rises within the window divided by the whole window, in events per
// hour. Only rises are kept, so a quiet link costs nothing.
//
// Degraded: a link whose recovery or replay rate reaches its threshold (0 turns that check off)
// marks its pair `d`; on an NVSwitch fabric it marks every NVLink pair of its GPU, since traffic to
// any peer crosses it.
// Down: on a direct mesh a link that was active with a known peer GPU and is now inactive marks
// that pair `0`. On an NVSwitch fabric a GPU with fewer active switch links than its peers have, or
// than it had itself in an earlier pass, marks all its pairs `0` and the GPU `d`.
#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "agent/discovery.h"
#include "topology/gpu_topology.h"

namespace gte::agent {

using HealthClock = std::chrono::steady_clock;

struct LinkHealthSettings {
  double recoveryPerHour = 2;         // --nvlink-recovery-per-hour
  double replayPerHour = 100;         // --nvlink-replay-per-hour
  std::chrono::seconds window{3600};  // --health-window
};

enum class LinkCounter { kReplay = 0, kRecovery = 1, kCrcFlit = 2, kCrcData = 3 };
inline constexpr int kLinkCounters = 4;
const char* linkCounterName(LinkCounter counter);

struct LinkVerdict {
  std::vector<LinkHealth> pairs;  // labels-v1 pair order; every pair kOk when nothing is wrong
  std::vector<bool> gpuDegraded;  // per GPU: fewer NVSwitch links than it should have
  std::vector<std::vector<std::string>> reasons;  // per GPU, for logs and gpu-check
};

class LinkHealthMonitor {
 public:
  explicit LinkHealthMonitor(LinkHealthSettings settings) : settings_(settings) {}

  // One pass: `sample` per GPU as discovery read it, `nvlinks` the pair NVLink counts it
  // published. A change in the GPU count starts over.
  LinkVerdict update(const HealthSample& sample, const std::vector<std::uint8_t>& nvlinks,
                     HealthClock::time_point now);

  // Events per hour over the window as of the last update; 0 for an unknown link.
  double rate(int gpu, int link, LinkCounter counter) const;
  const LinkHealthSettings& settings() const { return settings_; }

 private:
  struct Rise {
    HealthClock::time_point at;
    std::uint64_t count;
  };
  struct LinkState {
    bool everUp = false;  // active with a known remote in some pass
    int peerGpu = -1;     // the remote of the last active pass
    bool toSwitch = false;
    std::array<std::optional<std::uint64_t>, kLinkCounters> last;
    std::array<std::deque<Rise>, kLinkCounters> rises;
    std::array<std::uint64_t, kLinkCounters> inWindow{};
  };

  void record(LinkState& state, const LinkSample& link, HealthClock::time_point now);
  void markDown(int gpu, int n, const std::vector<LinkSample>& links, LinkVerdict& out);
  void markSwitchShortfall(const HealthSample& sample, int n, LinkVerdict& out);
  void markRates(int gpu, int n, const std::vector<std::uint8_t>& nvlinks, LinkVerdict& out);

  LinkHealthSettings settings_;
  std::vector<std::vector<LinkState>> links_;  // [gpu][link]
  std::vector<int> switchLinksSeen_;           // per GPU: most active switch links in any pass
};

// The worse of two pair states: down beats degraded beats ok (cordoned is the operator's and is
// applied last, over everything).
LinkHealth worseLink(LinkHealth a, LinkHealth b);

}  // namespace gte::agent
