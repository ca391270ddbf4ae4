#include "agent/run_command.h"

#include <signal.h>

#include <atomic>
#include <condition_variable>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "agent/agent_http.h"
#include "agent/agent_loop.h"
#include "agent/discover_command.h"
#include "agent/node_publisher.h"
#include "agent/nvml_health.h"
#include "agent/pod_resources_client.h"
#include "agent/usage.h"
#include "kube/api_client.h"
#include "kube/in_cluster_config.h"
#include "kube/kubeconfig_file.h"
#include "log/logger.h"
#include "policy/default_policy.h"

namespace gte::agent {
namespace {

// SIGTERM/SIGINT are blocked in every thread and taken by one waiter that wakes the loop.
class StopSignal {
 public:
  StopSignal() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    waiter_ = std::thread([this] {
      int signal = 0;
      sigwait(&set_, &signal);
      waiterDone_ = true;
      stop();
    });
  }
  ~StopSignal() {
    if (!waiterDone_) {
      pthread_kill(waiter_.native_handle(), SIGTERM);  // release the waiter (stopped by --once)
    }
    waiter_.join();
  }
  void stop() {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    wake_.notify_all();
  }
  bool stopped() {
    std::lock_guard lock(mutex_);
    return stopped_;
  }
  // False when stopped before `until`.
  bool sleepUntil(Clock::time_point until) {
    std::unique_lock lock(mutex_);
    return !wake_.wait_until(lock, until, [this] { return stopped_; });
  }

 private:
  sigset_t set_{};
  std::atomic<bool> waiterDone_{false};
  std::thread waiter_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopped_ = false;
};

Result<std::unique_ptr<kube::ApiClient>> apiClient(const RunOptions& run) {
  auto config = run.access == ClusterAccess::kInCluster ? kube::inClusterConfig()
                                                        : kube::loadKubeconfigFile(run.kubeconfig);
  if (!config.ok()) {
    return config.error();
  }
  kube::ApiClientOptions options;
  options.userAgent = "gpu-topology-agent";
  return kube::ApiClient::create(*config, options);
}

int cleanup(NodePublisher& publisher, CompanionPublisher* companion, const std::string& node) {
  auto removed = publisher.cleanup();
  if (!removed.ok()) {
    log::error("cleanup failed", {{"node", node}, {"error", removed.error().message}});
    return kExitFailed;
  }
  log::info(*removed ? "labels removed" : "no labels to remove", {{"node", node}});
  if (companion != nullptr) {
    auto slice = companion->remove();
    if (!slice.ok()) {
      log::error("companion slice cleanup failed",
                 {{"node", node}, {"error", slice.error().message}});
      return kExitFailed;
    }
    log::info(*slice ? "companion slice removed" : "no companion slice to remove",
              {{"node", node}});
  }
  return kExitOk;
}

// One log line per GPU whose health changed since the last pass, with its reasons.
void logHealthChanges(const HealthVerdict& verdict, std::string& last) {
  std::string now;
  for (const GpuVerdict& gpu : verdict.gpus) {
    now += healthCode(gpu.health);
  }
  for (std::size_t i = 0; i < verdict.gpus.size(); ++i) {
    // The first pass logs only the GPUs that are not healthy.
    if (i < last.size() ? last[i] == now[i] : now[i] == '1') {
      continue;
    }
    std::string reasons;
    for (const std::string& reason : verdict.gpus[i].reasons) {
      reasons += (reasons.empty() ? "" : "; ") + reason;
    }
    log::info(
        "GPU health",
        {{"gpu", std::to_string(i)}, {"health", std::string(1, now[i])}, {"reasons", reasons}});
  }
  last = now;
}

}  // namespace

int runDaemon(const AgentInvocation& invocation) {
  const RunOptions& run = invocation.run;
  if (log::Level level; log::parseLevel(run.logLevel, level)) {
    log::setLevel(level);
  }
  Policy policy = defaultPolicy();
  policy.labelPrefix = invocation.source.labelPrefix;

  std::unique_ptr<kube::ApiClient> api;
  std::unique_ptr<NodePublisher> publisher;
  std::unique_ptr<CompanionPublisher> companion;
  if (!run.dryRun) {
    auto client = apiClient(run);
    if (!client.ok()) {
      log::error("API client", {{"error", client.error().message}});
      return kExitFailed;
    }
    api = std::move(client).value();
    publisher = std::make_unique<NodePublisher>(*api, run.node, policy.labelPrefix);
    if (run.companionSlice) {
      companion = std::make_unique<CompanionPublisher>(*api, run.node, run.companionDriver,
                                                       policy.labelPrefix);
    }
  }
  if (run.cleanup) {
    if (!publisher) {
      log::error("--cleanup needs the API server (not --dry-run)");
      return kExitUsage;
    }
    return cleanup(*publisher, companion.get(), run.node);
  }

  StopSignal signal;
  AgentMetrics metrics;
  if (companion) {
    metrics.enableCompanion();
  }
  const auto staleAfter = std::max(
      std::chrono::duration_cast<std::chrono::seconds>(run.interval * 3), std::chrono::seconds(90));
  std::unique_ptr<AgentHttp> http;
  if (!run.listen.empty()) {
    http = std::make_unique<AgentHttp>(run.listen, metrics, staleAfter);
    if (auto status = http->start(); !status.ok()) {
      log::error("HTTP endpoint", {{"error", status.error().message}});
      signal.stop();
      return kExitFailed;
    }
  }
  const SourceOptions source = invocation.source;
  AgentLoop::DiscoverFn discover = [source, policy]() {
    int exitCode = kExitFailed;
    return discoverNode(source, policy, exitCode);
  };
  // NVML: one session across passes, with the health signals (docs/agent.md, Health).
  std::unique_ptr<NvmlHealthSource> health;
  std::string lastHealth;
  if (source.nvml) {
    health = std::make_unique<NvmlHealthSource>(source.nvmlLib, source.health);
    discover = [&health, &metrics, &lastHealth, source]() -> Result<Discovery> {
      auto discovery = health->discover();
      metrics.setHealthMetrics(health->renderMetrics());
      if (!discovery.ok()) {
        return discovery;
      }
      logHealthChanges(health->lastVerdict(), lastHealth);
      if (source.used) {
        if (auto status = applyUsedBits(*discovery, *source.used); !status.ok()) {
          return status.error();
        }
      }
      return discovery;
    };
  }
  // Usage from the kubelet unless --used gives it (tests, dry runs).
  AgentLoop::UsageFn usage;
  if (!source.used) {
    usage = [socket = run.podResourcesSocket]() { return listAllocatedGpuDevices(socket); };
  }
  AgentLoop loop(discover, usage, publisher.get(), policy,
                 AgentLoop::Settings{run.minInterval, source.nvml}, metrics, std::cout);
  loop.setCompanionPublisher(companion.get());
  std::unique_ptr<DevicePluginConfigSource> sharingSource;
  if (api && !run.devicePluginConfigName.empty()) {
    sharingSource = std::make_unique<DevicePluginConfigSource>(
        *api, run.devicePluginConfigNamespace, run.devicePluginConfigName,
        run.devicePluginConfigDefault);
    loop.setSharingSource(sharingSource.get());
  }
  log::info("agent started", {{"node", run.node}, {"dry_run", run.dryRun ? "true" : "false"}});
  int exitCode = kExitOk;
  while (!signal.stopped()) {
    const auto now = Clock::now();
    const PassOutcome outcome = loop.pass(now);
    if (run.once) {
      exitCode = outcome.ok ? kExitOk : kExitFailed;
      signal.stop();
      break;
    }
    auto next = now + run.interval;
    if (outcome.retryAt && *outcome.retryAt < next) {
      next = *outcome.retryAt;
    }
    signal.sleepUntil(next);
  }
  if (http) {
    http->stop();
  }
  log::info("agent stopped");
  return exitCode;
}

}  // namespace gte::agent
