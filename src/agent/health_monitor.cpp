#include "agent/health_monitor.h"

#include <algorithm>
#include <cstdio>

#include "agent/nvml_api.h"

namespace gte::agent {
namespace {

int severity(GpuHealth h) {
  switch (h) {
    case GpuHealth::kHealthy:
      return 0;
    case GpuHealth::kDegraded:
      return 1;
    case GpuHealth::kUnhealthy:
      return 2;
    case GpuHealth::kCordoned:
      return 3;
  }
  return 0;
}

void worsen(GpuVerdict& verdict, GpuHealth health, std::string reason) {
  if (severity(health) > severity(verdict.health)) {
    verdict.health = health;
  }
  verdict.reasons.push_back(std::move(reason));
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

}  // namespace

XidAction xidAction(std::uint64_t xid) {
  switch (xid) {
    // The application's own faults (NVIDIA's catalog: RESTART_APP); the GPU is fine.
    case 8:   // GPU stopped processing (channel idle timeout)
    case 11:  // invalid or corrupted push buffer stream
    case 13:  // graphics engine exception
    case 31:  // GPU memory page fault
    case 43:  // GPU stopped processing
    case 45:  // preemptive cleanup after a previous error
    case 68:  // video decoder exception
    case 69:  // graphics engine class error
      return XidAction::kIgnore;
    // The GPU keeps working but is suspect: memory repair recorded, NVLink errors, contained
    // memory errors, a high single-bit error rate, a micro-controller warning.
    case 61:  // internal micro-controller breakpoint/warning
    case 63:  // ECC page retirement or row remapping recorded
    case 74:  // NVLink error
    case 92:  // high single-bit ECC error rate
    case 94:  // contained ECC error
      return XidAction::kDegrade;
    // A GPU reset or a reboot is needed before it can be trusted again.
    case 48:   // double-bit ECC error
    case 62:   // internal micro-controller halt
    case 64:   // ECC page retirement or row remapping failure
    case 79:   // GPU has fallen off the bus
    case 95:   // uncontained ECC error
    case 119:  // GSP RPC timeout
    case 120:  // GSP error
    case 140:  // unrecovered ECC error
      return XidAction::kFail;
    default:
      return XidAction::kUnknown;
  }
}

const char* xidActionName(XidAction action) {
  switch (action) {
    case XidAction::kIgnore:
      return "ignored";
    case XidAction::kDegrade:
      return "degraded";
    case XidAction::kFail:
      return "failed";
    case XidAction::kUnknown:
      return "unknown";
  }
  return "unknown";
}

char healthCode(GpuHealth health) {
  switch (health) {
    case GpuHealth::kHealthy:
      return '1';
    case GpuHealth::kDegraded:
      return 'd';
    case GpuHealth::kUnhealthy:
      return '0';
    case GpuHealth::kCordoned:
      return 'c';
  }
  return '1';
}

void HealthMonitor::judgeGpu(int gpu, const GpuSample& sample, HealthClock::time_point now,
                             GpuVerdict& out) {
  GpuState& state = gpus_[static_cast<std::size_t>(gpu)];
  const auto window = links_.settings().window;
  for (const std::uint64_t xid : sample.xids) {
    ++state.xidCounts[xid];
    switch (xidAction(xid)) {
      case XidAction::kFail:
        state.xidFailed = true;
        state.failedXid = xid;
        break;
      case XidAction::kDegrade:
        state.degradedXidAt = now;
        state.degradedXid = xid;
        break;
      default:
        break;
    }
  }
  if (state.xidFailed) {
    worsen(out, GpuHealth::kUnhealthy,
           "xid " + std::to_string(state.failedXid) + " (failed until the agent restarts)");
  }
  if (state.degradedXidAt && now - *state.degradedXidAt < window) {
    worsen(out, GpuHealth::kDegraded,
           "xid " + std::to_string(state.degradedXid) + " within the health window");
  }
  if (sample.pcieWidth && sample.pcieMaxWidth && *sample.pcieWidth < *sample.pcieMaxWidth) {
    worsen(out, GpuHealth::kDegraded,
           "pcie width x" + std::to_string(*sample.pcieWidth) + " of x" +
               std::to_string(*sample.pcieMaxWidth));
  }
  if (sample.clockEventReasons) {
    const struct {
      std::uint64_t bit;
      const char* name;
    } reasons[] = {{nvml::kClocksHwSlowdown, "hw slowdown"},
                   {nvml::kClocksHwThermalSlowdown, "hw thermal slowdown"},
                   {nvml::kClocksHwPowerBrakeSlowdown, "hw power brake slowdown"}};
    for (const auto& reason : reasons) {
      if ((*sample.clockEventReasons & reason.bit) != 0) {
        worsen(out, GpuHealth::kDegraded, std::string("clocks: ") + reason.name);
      }
    }
  }
  if (sample.eccUncorrectedVolatile) {
    // Backwards: a reset cleared the volatile count; not a rise.
    if (state.lastEcc && *sample.eccUncorrectedVolatile > *state.lastEcc) {
      state.eccRoseAt = now;
    }
    state.lastEcc = sample.eccUncorrectedVolatile;
  }
  if (state.eccRoseAt && now - *state.eccRoseAt < window) {
    worsen(out, GpuHealth::kDegraded, "volatile uncorrectable ECC errors rose");
  }
}

HealthVerdict HealthMonitor::evaluate(const Discovery& discovery, HealthClock::time_point now) {
  const GpuTopology& topo = discovery.topology;
  const int n = topo.gpuCount;
  HealthVerdict verdict;
  verdict.gpus.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto at = static_cast<std::size_t>(i);
    if (at < topo.health.size() && topo.health[at] != GpuHealth::kHealthy) {
      const bool known =
          at < discovery.healthReasons.size() && !discovery.healthReasons[at].empty();
      worsen(verdict.gpus[at], topo.health[at],
             known ? discovery.healthReasons[at].front() : "discovery marked it unhealthy");
      for (std::size_t k = 1; known && k < discovery.healthReasons[at].size(); ++k) {
        verdict.gpus[at].reasons.push_back(discovery.healthReasons[at][k]);
      }
    }
  }
  if (!discovery.health.present || discovery.health.gpus.size() != static_cast<std::size_t>(n)) {
    lastSample_ = discovery.health;
    lastVerdict_ = verdict;
    return verdict;
  }
  if (gpus_.size() != static_cast<std::size_t>(n)) {
    gpus_.assign(static_cast<std::size_t>(n), GpuState{});
  }
  for (int i = 0; i < n; ++i) {
    const auto at = static_cast<std::size_t>(i);
    const std::string uuid = at < discovery.gpuUuids.size() ? discovery.gpuUuids[at] : "";
    if (!uuid.empty() && uuid != gpus_[at].uuid) {
      gpus_[at] = GpuState{};  // another GPU at this index
      gpus_[at].uuid = uuid;
    }
    judgeGpu(i, discovery.health.gpus[at], now, verdict.gpus[at]);
  }
  LinkVerdict links = links_.update(discovery.health, topo.nvlinks, now);
  for (int i = 0; i < n; ++i) {
    const auto at = static_cast<std::size_t>(i);
    for (auto& reason : links.reasons[at]) {
      verdict.gpus[at].reasons.push_back(std::move(reason));
    }
    if (links.gpuDegraded[at]) {
      worsen(verdict.gpus[at], GpuHealth::kDegraded, "missing NVSwitch links");
      verdict.gpus[at].reasons.pop_back();  // the link reason above says it already
    }
  }
  if (std::any_of(links.pairs.begin(), links.pairs.end(),
                  [](LinkHealth h) { return h != LinkHealth::kOk; })) {
    verdict.pairs = std::move(links.pairs);
  }
  lastSample_ = discovery.health;
  lastVerdict_ = verdict;
  return verdict;
}

void applyHealth(const HealthVerdict& verdict, GpuTopology& topology) {
  for (std::size_t i = 0; i < verdict.gpus.size() && i < topology.health.size(); ++i) {
    if (severity(verdict.gpus[i].health) > severity(topology.health[i])) {
      topology.health[i] = verdict.gpus[i].health;
    }
  }
  if (!verdict.pairs.empty() &&
      verdict.pairs.size() == static_cast<std::size_t>(pairCount(topology.gpuCount))) {
    topology.linkHealth = verdict.pairs;
  } else {
    topology.linkHealth.clear();
  }
}

std::string HealthMonitor::renderMetrics() const {
  std::string out;
  const auto header = [&out](const char* name, const char* type, const char* help) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  };
  const auto& gpus = lastSample_.gpus;
  if (!lastSample_.present) {
    return out;
  }
  const auto gpuLabel = [](std::size_t gpu) { return "gpu=\"" + std::to_string(gpu) + "\""; };
  header("gte_agent_gpu_health", "gauge",
         "1 for the health state each GPU is published with (labels-v1 health, before cordons).");
  static const struct {
    GpuHealth health;
    const char* name;
  } states[] = {{GpuHealth::kHealthy, "healthy"},
                {GpuHealth::kDegraded, "degraded"},
                {GpuHealth::kUnhealthy, "failed"}};
  for (std::size_t i = 0; i < lastVerdict_.gpus.size(); ++i) {
    for (const auto& s : states) {
      out += "gte_agent_gpu_health{" + gpuLabel(i) + ",state=\"" + s.name + "\"} " +
             (lastVerdict_.gpus[i].health == s.health ? "1" : "0") + "\n";
    }
  }
  header("gte_agent_nvlink_active", "gauge", "1 while the NVLink is active.");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    for (std::size_t l = 0; l < gpus[i].links.size(); ++l) {
      out += "gte_agent_nvlink_active{" + gpuLabel(i) + ",link=\"" + std::to_string(l) + "\"} " +
             (gpus[i].links[l].active ? "1" : "0") + "\n";
    }
  }
  header("gte_agent_nvlink_errors_total", "counter",
         "NVLink error counters as the driver reports them (since the driver loaded).");
  std::string rates;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    for (std::size_t l = 0; l < gpus[i].links.size(); ++l) {
      const LinkSample& link = gpus[i].links[l];
      const std::optional<std::uint64_t>* values[] = {&link.replay, &link.recovery, &link.crcFlit,
                                                      &link.crcData};
      for (int c = 0; c < kLinkCounters; ++c) {
        if (!*values[c]) {
          continue;
        }
        const std::string labels = gpuLabel(i) + ",link=\"" + std::to_string(l) + "\",counter=\"" +
                                   linkCounterName(static_cast<LinkCounter>(c)) + "\"";
        out +=
            "gte_agent_nvlink_errors_total{" + labels + "} " + std::to_string(**values[c]) + "\n";
        rates += "gte_agent_nvlink_error_rate_per_hour{" + labels + "} " +
                 number(links_.rate(static_cast<int>(i), static_cast<int>(l),
                                    static_cast<LinkCounter>(c))) +
                 "\n";
      }
    }
  }
  header("gte_agent_nvlink_error_rate_per_hour", "gauge",
         "NVLink error counter rises within the health window, per hour.");
  out += rates;
  header("gte_agent_xid_events_total", "counter", "XID critical error events seen, by code.");
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    for (const auto& [xid, count] : gpus_[i].xidCounts) {
      out += "gte_agent_xid_events_total{" + gpuLabel(i) + ",xid=\"" + std::to_string(xid) +
             "\",action=\"" + xidActionName(xidAction(xid)) + "\"} " + std::to_string(count) + "\n";
    }
  }
  header("gte_agent_pcie_link_width", "gauge", "PCIe link width, current and maximum.");
  std::string gens;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const auto put = [&](std::string& to, const char* name, const char* kind,
                         const std::optional<unsigned int>& value) {
      if (value) {
        to += std::string(name) + "{" + gpuLabel(i) + ",kind=\"" + kind + "\"} " +
              std::to_string(*value) + "\n";
      }
    };
    put(out, "gte_agent_pcie_link_width", "current", gpus[i].pcieWidth);
    put(out, "gte_agent_pcie_link_width", "max", gpus[i].pcieMaxWidth);
    put(gens, "gte_agent_pcie_link_generation", "current", gpus[i].pcieGen);
    put(gens, "gte_agent_pcie_link_generation", "max", gpus[i].pcieMaxGen);
  }
  header("gte_agent_pcie_link_generation", "gauge",
         "PCIe link generation, current and maximum (idle GPUs lower it: not a health signal).");
  out += gens;
  header("gte_agent_clock_event_reasons", "gauge",
         "The GPU's clock event (throttle) reason bits (nvmlClocksEventReasons).");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (gpus[i].clockEventReasons) {
      out += "gte_agent_clock_event_reasons{" + gpuLabel(i) + "} " +
             std::to_string(*gpus[i].clockEventReasons) + "\n";
    }
  }
  header("gte_agent_ecc_uncorrected_volatile_total", "counter",
         "Volatile uncorrectable ECC errors (since the driver loaded or the GPU was reset).");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (gpus[i].eccUncorrectedVolatile) {
      out += "gte_agent_ecc_uncorrected_volatile_total{" + gpuLabel(i) + "} " +
             std::to_string(*gpus[i].eccUncorrectedVolatile) + "\n";
    }
  }
  return out;
}

}  // namespace gte::agent
