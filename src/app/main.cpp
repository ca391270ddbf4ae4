// gpu-topology-extender: wires the edges (HTTP server, policy file, cluster source, metrics) around
// the pure decision core, then waits for SIGTERM/SIGINT.
#include <signal.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "app/claim_template_command.h"
#include "app/cli_options.h"
#include "app/cluster_wiring.h"
#include "app/explain_command.h"
#include "app/version.h"
#include "app/whatif_command.h"
#include "kube/api_client.h"
#include "log/logger.h"
#include "metrics/metrics.h"
#include "policy/default_policy.h"
#include "policy/policy_hash.h"
#include "policy/policy_store.h"
#include "server/http_server.h"
#include "server/router.h"
#include "service/cluster_backend.h"
#include "service/extender_service.h"
#include "service/placement_recorder.h"

namespace {

using namespace gte;

constexpr auto kPolicyPollInterval = std::chrono::seconds(5);
constexpr auto kObserveInterval = std::chrono::seconds(2);

// Signals are blocked in every thread (they inherit the mask) and taken synchronously in main.
sigset_t blockShutdownSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

// Waits up to `period` for one of `signals`; true when one arrived.
bool signalWithin(const sigset_t& signals, std::chrono::milliseconds period) {
  const auto until = std::chrono::steady_clock::now() + period;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(
        until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    timespec wait{};
    wait.tv_sec = static_cast<time_t>(left.count() / 1'000'000'000);
    wait.tv_nsec = static_cast<long>(left.count() % 1'000'000'000);
    if (sigtimedwait(&signals, nullptr, &wait) > 0) return true;
    if (errno != EINTR && errno != EAGAIN) return false;
  }
}

void onPolicyEvent(metrics::Metrics& metrics, const PolicyReloadEvent& event) {
  if (event.kind == PolicyReloadEvent::Kind::kLoaded) {
    metrics.countPolicyReload(metrics::ReloadResult::kOk);
    metrics.setPolicyHash(event.policyHash);
    log::info("policy loaded", {{"hash", event.policyHash}});
  } else {
    metrics.countPolicyReload(metrics::ReloadResult::kError);
    log::error("policy reload failed; keeping the last good policy",
               {{"error", event.error ? event.error->message : "unknown"},
                {"active_hash", event.policyHash}});
  }
}

server::ServerOptions serverOptions(const app::ServeOptions& options, std::size_t threads) {
  server::ServerOptions s;
  s.host = options.host;
  s.port = options.port;
  s.tlsCertFile = options.tlsCertFile;
  s.tlsKeyFile = options.tlsKeyFile;
  s.tlsClientCaFile = options.tlsClientCaFile;
  s.maxHeaderBytes = options.maxHeaderBytes;
  s.maxBodyBytes = options.maxBodyBytes;
  s.maxConnections = options.maxConnections;
  s.requestTimeout = options.requestTimeout;
  s.idleTimeout = options.idleTimeout;
  s.tlsHandshakeTimeout = options.tlsHandshakeTimeout;
  s.ioThreads = threads;
  s.decisionThreads = options.decisionThreads ? options.decisionThreads : threads;
  return s;
}

server::ServerOptions probeServerOptions(const app::ServeOptions& options) {
  server::ServerOptions s;
  s.host = options.metricsHost;
  s.port = options.metricsPort;
  s.maxHeaderBytes = options.maxHeaderBytes;
  s.maxBodyBytes = 64 * 1024;
  s.maxConnections = 64;
  s.requestTimeout = options.requestTimeout;
  s.idleTimeout = options.idleTimeout;
  s.ioThreads = 1;
  s.decisionThreads = 1;
  return s;
}

int serve(const app::ServeOptions& options) {
  const sigset_t signals = blockShutdownSignals();
  const std::size_t threads = options.threads
                                  ? options.threads
                                  : std::max<std::size_t>(2, std::thread::hardware_concurrency());
  kube::initializeClientThreadPool(threads);
  log::Level level = log::Level::kInfo;
  log::parseLevel(options.logLevel, level);
  log::setLevel(level);

  metrics::Metrics metrics;
  metrics.setBuildInfo(app::kVersionNumber, app::kGitRevision);
  // The cluster wiring subscribes to policy changes (snapshots are rebuilt under a new policy).
  app::PolicyListeners listeners;
  auto initial = std::make_shared<const Policy>(defaultPolicy());
  std::unique_ptr<PolicyStore> store;
  // The first read is the start's, not a reload: it neither logs "reload failed" nor counts a
  // reload; its outcome is the start-up line below (or the refusal to start).
  std::atomic<bool> started{false};
  if (!options.policyFile.empty()) {
    store = std::make_unique<PolicyStore>(
        options.policyFile, initial, [&metrics, &listeners, &started](const PolicyReloadEvent& e) {
          if (started.load()) onPolicyEvent(metrics, e);
          if (e.kind == PolicyReloadEvent::Kind::kLoaded) listeners.notify(e.policy);
        });
    if (auto s = store->reload(); !s) {
      log::error("policy file invalid; not starting",
                 {{"file", options.policyFile}, {"error", s.error().message}});
      std::fprintf(stderr, "gpu-topology-extender: cannot start: %s\n", s.error().message.c_str());
      return 2;
    }
    const std::string hash = policyHash(*store->current());
    metrics.setPolicyHash(hash);
    metrics.countPolicyReload(metrics::ReloadResult::kOk);
    log::info("policy loaded", {{"file", options.policyFile}, {"hash", hash}});
    started.store(true);
    store->start(kPolicyPollInterval);
  } else {
    metrics.setPolicyHash(policyHash(*initial));
    log::info("using the built-in default policy", {{"hash", policyHash(*initial)}});
  }
  auto currentPolicy = [&store, initial]() { return store ? store->current() : initial; };

  // Placement regret: prioritize records each GPU pod's decision, the cluster cache reports it
  // bound (cluster-cache modes only; docs/topology-health.md).
  PlacementRecorder placements(&metrics);
  auto cluster =
      app::makeClusterBackend(options, currentPolicy(), listeners, &metrics, &placements);
  if (!cluster) {
    std::fprintf(stderr, "gpu-topology-extender: cannot start: %s\n",
                 cluster.error().message.c_str());
    return 2;
  }
  std::unique_ptr<app::ClusterObserver> observer;
  // Full-Node mode has no cache to wait for: kube-scheduler sends every Node. Without leader
  // election this replica answers binds from the start (the observer keeps it current).
  metrics.setLeader(options.leaderElection == app::LeaderElection::kNone);
  if (!cluster->backend) metrics.setCacheSynced(true);
  if (cluster->backend) {
    observer = std::make_unique<app::ClusterObserver>(*cluster->backend, cluster->counts, metrics,
                                                      kObserveInterval, nullptr, &placements);
  }
  ExtenderService service(currentPolicy, cluster->backend.get(), &metrics,
                          WhatifLimits{options.whatifMaxPods, options.whatifDeadline},
                          cluster->backend ? &placements : nullptr);
  server::RouterOptions limits;
  limits.maxNodesPerRequest = options.maxNodesPerRequest;
  limits.namesOnly = options.cluster != app::ClusterSource::kNone;
  limits.explain = options.explain;
  limits.whatif = options.whatif;
  limits.nodes = options.nodes;
  server::Router router(options.pathPrefix, service, &metrics, app::versionJson(), limits);
  server::HttpServer server(serverOptions(options, threads), router);
  if (auto s = server.start(); !s) {
    std::fprintf(stderr, "gpu-topology-extender: %s\n", s.error().message.c_str());
    return 1;
  }
  // The probe/metrics port: plain HTTP, no verbs, small limits, one thread.
  server::RouterOptions probeOnly;
  probeOnly.serveVerbs = false;
  server::Router probeRouter(options.pathPrefix, service, &metrics, app::versionJson(), probeOnly);
  std::unique_ptr<server::HttpServer> probeServer;
  if (options.metricsPort != 0) {
    probeServer = std::make_unique<server::HttpServer>(probeServerOptions(options), probeRouter);
    if (auto s = probeServer->start(); !s) {
      std::fprintf(stderr, "gpu-topology-extender: --metrics-listen: %s\n",
                   s.error().message.c_str());
      return 1;
    }
  }
  log::info("gpu-topology-extender serving", {{"version", app::kVersion},
                                              {"prefix", options.pathPrefix},
                                              {"threads", std::to_string(threads)}});
  int sig = 0;
  sigwait(&signals, &sig);
  // SIGTERM (kubelet, docker stop) drains; SIGINT (Ctrl-C) stops at once, answering what is in
  // flight. docs/operations.md, "Graceful shutdown".
  const auto drainPeriod = sig == SIGTERM ? options.drainPeriod : std::chrono::milliseconds(0);
  log::info("shutting down: draining connections",
            {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"},
             {"drain_period_ms", std::to_string(drainPeriod.count())},
             {"grace_ms", std::to_string(options.shutdownGrace.count())}});
  probeRouter.setDraining(true);  // kubelet's readiness probe may be on the probe port
  // A leader hands over first: a standby takes the lease at its next read and lists the pods
  // while this replica drains (and refuses binds: kube-scheduler retries them there).
  if (cluster->stepDown) cluster->stepDown();
  if (drainPeriod.count() > 0) {
    server.drain();
    if (signalWithin(signals, drainPeriod)) {
      log::info("second signal: drain period cut short");
    }
  }
  if (!server.stop(options.shutdownGrace)) {
    // A decision is still running on a worker thread: exit without unwinding under it.
    std::fflush(nullptr);
    std::_Exit(1);
  }
  log::info("drained; exiting");
  if (probeServer) probeServer->stop(std::chrono::seconds(1));
  if (store) store->stop();
  observer.reset();
  cluster->backend.reset();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto invocation = gte::app::parseCommandLine(args);
  if (!invocation) {
    std::fprintf(stderr, "gpu-topology-extender: %s\n", invocation.error().message.c_str());
    return 2;
  }
  switch (invocation->command) {
    case gte::app::Command::kHelp:
      std::fputs(invocation->helpText.c_str(), stdout);
      return 0;
    case gte::app::Command::kVersion:
      std::printf("gpu-topology-extender %s\n", gte::app::kVersion);
      return 0;
    case gte::app::Command::kExplain:
      return gte::app::runExplainCommand(invocation->explain);
    case gte::app::Command::kWhatif:
      return gte::app::runWhatifCommand(invocation->whatif);
    case gte::app::Command::kNodes:
      return gte::app::runNodesCommand(invocation->nodes);
    case gte::app::Command::kClaimTemplate:
      return gte::app::runClaimTemplateCommand(invocation->claimTemplate);
    case gte::app::Command::kServe:
      try {
        return serve(invocation->serve);
      } catch (const std::exception& e) {
        // Start-up only (metric registration, thread pool); the request path does not throw.
        std::fprintf(stderr, "gpu-topology-extender: fatal: %s\n", e.what());
        return 1;
      }
  }
  return 0;
}
