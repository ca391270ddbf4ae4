#pragma once
// What the agent exposes on /metrics and /healthz. Counters are atomics written by the publishing
// loop and read by HTTP threads; the last error text sits behind a mutex.
#include <atomic>
#include <cstdint>
#include <string>

#include "base/mutex.h"

namespace gte::agent {

// Why no companion slice is published: the API server dropped skipNodeOperations, or the Node does
// not declare DRAOptionalNodeOperations (its kubelet's gate is off).
enum class CompanionRefusal { kApiServer, kKubelet };

class AgentMetrics {
 public:
  void passSucceeded(std::int64_t unixSeconds);
  void discoveryFailed(const std::string& error, bool nvml);
  void usageFailed(const std::string& error);
  void apiFailed(const std::string& error);
  void labelsWritten();
  // --companion-slice: a slice written and kept; one the API server stripped of
  // skipNodeOperations (deleted again); whether a slice is published now.
  void companionWritten();
  void companionRefused(CompanionRefusal why);
  void companionPublished(bool published);
  void enableCompanion() { companionEnabled_ = true; }
  // NVML health (docs/agent.md, Health): the families HealthMonitor::renderMetrics wrote for the
  // last pass, rendered as they are; malformed cordon annotation entries seen.
  void setHealthMetrics(std::string text);
  void cordonAnnotationErrors(std::uint64_t count);
  // --device-plugin-config: a pass whose device plugin configuration did not read.
  void devicePluginConfigFailed() { ++devicePluginConfigErrors_; }
  std::uint64_t devicePluginConfigErrors() const { return devicePluginConfigErrors_.load(); }
  std::uint64_t cordonErrors() const { return cordonErrors_.load(); }

  std::int64_t lastSuccess() const { return lastSuccess_.load(); }
  std::uint64_t writes() const { return writes_.load(); }
  std::uint64_t discoveryErrors() const { return discoveryErrors_.load(); }
  std::uint64_t nvmlErrors() const { return nvmlErrors_.load(); }
  std::uint64_t apiErrors() const { return apiErrors_.load(); }
  std::uint64_t companionWrites() const { return companionWrites_.load(); }
  std::uint64_t companionRefusals(CompanionRefusal why) const {
    return (why == CompanionRefusal::kApiServer ? apiServerRefusals_ : kubeletRefusals_).load();
  }
  std::string lastError() const;

  // Healthy once a pass succeeded within `staleAfterSeconds` of `nowUnix`.
  bool healthy(std::int64_t nowUnix, std::int64_t staleAfterSeconds) const;
  // Prometheus text exposition format 0.0.4.
  std::string render() const;

 private:
  void setError(const std::string& error);
  std::atomic<std::int64_t> lastSuccess_{0};
  std::atomic<std::uint64_t> writes_{0};
  std::atomic<std::uint64_t> discoveryErrors_{0};
  std::atomic<std::uint64_t> nvmlErrors_{0};
  std::atomic<std::uint64_t> usageErrors_{0};
  std::atomic<std::uint64_t> apiErrors_{0};
  std::atomic<std::uint64_t> companionWrites_{0};
  std::atomic<std::uint64_t> apiServerRefusals_{0};
  std::atomic<std::uint64_t> kubeletRefusals_{0};
  std::atomic<bool> companionPublished_{false};
  bool companionEnabled_ = false;  // set before the HTTP threads start; families rendered only then
  std::atomic<std::uint64_t> cordonErrors_{0};
  std::atomic<std::uint64_t> devicePluginConfigErrors_{0};
  mutable Mutex mutex_;
  std::string lastError_ GTE_GUARDED_BY(mutex_);
  std::string healthText_ GTE_GUARDED_BY(mutex_);
};

}  // namespace gte::agent
