#include "agent/link_health_monitor.h"

#include <algorithm>
#include <cstdio>

namespace gte::agent {
namespace {

int severity(LinkHealth h) {
  switch (h) {
    case LinkHealth::kOk:
      return 0;
    case LinkHealth::kDegraded:
      return 1;
    case LinkHealth::kDown:
      return 2;
    case LinkHealth::kCordoned:
      return 3;
  }
  return 0;
}

const std::optional<std::uint64_t>& counterOf(const LinkSample& link, int counter) {
  switch (counter) {
    case 0:
      return link.replay;
    case 1:
      return link.recovery;
    case 2:
      return link.crcFlit;
    default:
      return link.crcData;
  }
}

std::string perHour(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g/h", value);
  return text;
}

void setPair(LinkVerdict& out, int i, int j, int n, LinkHealth health) {
  if (i == j || i < 0 || j < 0 || i >= n || j >= n) {
    return;
  }
  auto& pair = out.pairs[static_cast<std::size_t>(pairIndex(std::min(i, j), std::max(i, j), n))];
  pair = worseLink(pair, health);
}

}  // namespace

const char* linkCounterName(LinkCounter counter) {
  switch (counter) {
    case LinkCounter::kReplay:
      return "replay";
    case LinkCounter::kRecovery:
      return "recovery";
    case LinkCounter::kCrcFlit:
      return "crc_flit";
    case LinkCounter::kCrcData:
      return "crc_data";
  }
  return "unknown";
}

LinkHealth worseLink(LinkHealth a, LinkHealth b) {
  return severity(a) >= severity(b) ? a : b;
}

void LinkHealthMonitor::record(LinkState& state, const LinkSample& link,
                               HealthClock::time_point now) {
  for (int c = 0; c < kLinkCounters; ++c) {
    const auto& value = counterOf(link, c);
    auto& last = state.last[static_cast<std::size_t>(c)];
    auto& rises = state.rises[static_cast<std::size_t>(c)];
    auto& total = state.inWindow[static_cast<std::size_t>(c)];
    if (value) {
      if (last) {
        // Backwards: the counter was reset (driver reload, GPU reset); all it holds is new.
        const std::uint64_t rise = *value >= *last ? *value - *last : *value;
        if (rise > 0) {
          rises.push_back(Rise{now, rise});
          total += rise;
        }
      }
      last = value;
    }
    while (!rises.empty() && rises.front().at <= now - settings_.window) {
      total -= rises.front().count;
      rises.pop_front();
    }
  }
  if (link.active && (link.peerGpu >= 0 || link.toSwitch)) {
    state.everUp = true;
    state.peerGpu = link.peerGpu;
    state.toSwitch = link.toSwitch;
  }
}

double LinkHealthMonitor::rate(int gpu, int link, LinkCounter counter) const {
  if (gpu < 0 || link < 0 || static_cast<std::size_t>(gpu) >= links_.size() ||
      static_cast<std::size_t>(link) >= links_[static_cast<std::size_t>(gpu)].size()) {
    return 0;
  }
  const auto& state = links_[static_cast<std::size_t>(gpu)][static_cast<std::size_t>(link)];
  const double hours = std::chrono::duration<double>(settings_.window).count() / 3600.0;
  if (hours <= 0) {
    return 0;
  }
  return static_cast<double>(state.inWindow[static_cast<std::size_t>(counter)]) / hours;
}

void LinkHealthMonitor::markDown(int gpu, int n, const std::vector<LinkSample>& links,
                                 LinkVerdict& out) {
  const auto& states = links_[static_cast<std::size_t>(gpu)];
  for (std::size_t link = 0; link < states.size(); ++link) {
    const LinkState& state = states[link];
    const bool activeNow = link < links.size() && links[link].active;
    if (state.everUp && !activeNow && state.peerGpu >= 0) {
      setPair(out, gpu, state.peerGpu, n, LinkHealth::kDown);
      out.reasons[static_cast<std::size_t>(gpu)].push_back(
          "nvlink " + std::to_string(link) + " to GPU " + std::to_string(state.peerGpu) +
          " down (was active)");
    }
  }
}

void LinkHealthMonitor::markSwitchShortfall(const HealthSample& sample, int n, LinkVerdict& out) {
  std::vector<int> active(static_cast<std::size_t>(n), 0);
  int most = 0;
  for (int i = 0; i < n; ++i) {
    for (const LinkSample& link : sample.gpus[static_cast<std::size_t>(i)].links) {
      active[static_cast<std::size_t>(i)] += link.active && link.toSwitch ? 1 : 0;
    }
    auto& seen = switchLinksSeen_[static_cast<std::size_t>(i)];
    seen = std::max(seen, active[static_cast<std::size_t>(i)]);
    most = std::max(most, active[static_cast<std::size_t>(i)]);
  }
  for (int i = 0; i < n; ++i) {
    const int want = std::max(most, switchLinksSeen_[static_cast<std::size_t>(i)]);
    const int have = active[static_cast<std::size_t>(i)];
    if (want == 0 || have >= want) {
      continue;
    }
    for (int j = 0; j < n; ++j) {
      setPair(out, i, j, n, LinkHealth::kDown);
    }
    out.gpuDegraded[static_cast<std::size_t>(i)] = true;
    out.reasons[static_cast<std::size_t>(i)].push_back(
        std::to_string(have) + " of " + std::to_string(want) + " NVSwitch links active");
  }
}

void LinkHealthMonitor::markRates(int gpu, int n, const std::vector<std::uint8_t>& nvlinks,
                                  LinkVerdict& out) {
  const auto& states = links_[static_cast<std::size_t>(gpu)];
  for (std::size_t link = 0; link < states.size(); ++link) {
    const LinkState& state = states[link];
    std::string why;
    const struct {
      LinkCounter counter;
      double threshold;
    } checks[] = {{LinkCounter::kRecovery, settings_.recoveryPerHour},
                  {LinkCounter::kReplay, settings_.replayPerHour}};
    for (const auto& check : checks) {
      const double r = rate(gpu, static_cast<int>(link), check.counter);
      if (check.threshold > 0 && r >= check.threshold) {
        why += std::string(why.empty() ? "" : ", ") + linkCounterName(check.counter) + " " +
               perHour(r) + " (threshold " + perHour(check.threshold) + ")";
      }
    }
    if (why.empty()) {
      continue;
    }
    out.reasons[static_cast<std::size_t>(gpu)].push_back("nvlink " + std::to_string(link) + ": " +
                                                         why);
    if (state.peerGpu >= 0) {
      setPair(out, gpu, state.peerGpu, n, LinkHealth::kDegraded);
    } else if (state.toSwitch) {
      for (int j = 0; j < n; ++j) {
        if (j != gpu && nvlinks.size() == static_cast<std::size_t>(pairCount(n)) &&
            nvlinks[static_cast<std::size_t>(pairIndex(std::min(gpu, j), std::max(gpu, j), n))] >
                0) {
          setPair(out, gpu, j, n, LinkHealth::kDegraded);
        }
      }
    }
  }
}

LinkVerdict LinkHealthMonitor::update(const HealthSample& sample,
                                      const std::vector<std::uint8_t>& nvlinks,
                                      HealthClock::time_point now) {
  const int n = static_cast<int>(sample.gpus.size());
  const auto count = static_cast<std::size_t>(n);
  if (links_.size() != count) {
    links_.assign(count, {});
    switchLinksSeen_.assign(count, 0);
  }
  LinkVerdict out{std::vector<LinkHealth>(static_cast<std::size_t>(pairCount(n)), LinkHealth::kOk),
                  std::vector<bool>(count, false), std::vector<std::vector<std::string>>(count)};
  for (std::size_t i = 0; i < count; ++i) {
    const auto& links = sample.gpus[i].links;
    auto& states = links_[i];
    if (states.size() < links.size()) {
      states.resize(links.size());
    }
    for (std::size_t link = 0; link < states.size(); ++link) {
      record(states[link], link < links.size() ? links[link] : LinkSample{}, now);
    }
  }
  for (int i = 0; i < n; ++i) {
    markDown(i, n, sample.gpus[static_cast<std::size_t>(i)].links, out);
    markRates(i, n, nvlinks, out);
  }
  markSwitchShortfall(sample, n, out);
  return out;
}

}  // namespace gte::agent
