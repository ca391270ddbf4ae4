#pragma once
// Per-GPU and per-pair health from each pass's health sample (docs/agent.md, Health): NVLink
// (LinkHealthMonitor), XID events, PCIe link width, clock event reasons and volatile
// uncorrectable ECC. Pure logic with the time passed in. The worst signal wins: `0` (failed) beats
// `d` (degraded) beats `1`; an operator's cordon (cordon_annotations.h) is applied after this and
// beats everything.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/discovery.h"
#include "agent/link_health_monitor.h"
#include "topology/gpu_topology.h"

namespace gte::agent {

// What an XID does to its GPU's published health.
enum class XidAction {
  kIgnore,   // the application's own error (13, 31, 43, 45, ...): counted only
  kDegrade,  // `d` for the health window after the last one
  kFail,     // `0` until the agent restarts (after the GPU's reset or replacement)
  kUnknown,  // not in the table: counted only
};
XidAction xidAction(std::uint64_t xid);
const char* xidActionName(XidAction action);

struct GpuVerdict {
  GpuHealth health = GpuHealth::kHealthy;
  std::vector<std::string> reasons;
};

struct HealthVerdict {
  std::vector<GpuVerdict> gpus;   // per GPU
  std::vector<LinkHealth> pairs;  // labels-v1 pair order; empty when every pair is fine
};

class HealthMonitor {
 public:
  explicit HealthMonitor(LinkHealthSettings settings) : links_(settings) {}

  // Evaluates the pass: `discovery.topology.health` holds what discovery itself found (lost GPU,
  // memory repair pending: `0`). No health sample: the discovery's health as it is.
  HealthVerdict evaluate(const Discovery& discovery, HealthClock::time_point now);

  // Prometheus text for the last evaluate(): counters, rates, XIDs, health per GPU.
  std::string renderMetrics() const;
  const LinkHealthMonitor& links() const { return links_; }

 private:
  struct GpuState {
    std::string uuid;  // a different GPU at this index starts over
    bool xidFailed = false;
    std::uint64_t failedXid = 0;
    std::optional<HealthClock::time_point> degradedXidAt;
    std::uint64_t degradedXid = 0;
    std::optional<std::uint64_t> lastEcc;
    std::optional<HealthClock::time_point> eccRoseAt;
    std::map<std::uint64_t, std::uint64_t> xidCounts;
  };

  void judgeGpu(int gpu, const GpuSample& sample, HealthClock::time_point now, GpuVerdict& out);

  LinkHealthMonitor links_;
  std::vector<GpuState> gpus_;
  HealthSample lastSample_;
  HealthVerdict lastVerdict_;
};

// Writes the verdict into the topology the labels are built from: per-GPU health (never better
// than discovery's), and linkHealth (left empty when every pair is fine).
void applyHealth(const HealthVerdict& verdict, GpuTopology& topology);

// `1`, `d`, `0`, `c`.
char healthCode(GpuHealth health);

}  // namespace gte::agent
