// gpu-topology-extender: wires the edges (HTTP server, policy file, cluster source, metrics) around
// the pure decision core, then waits for SIGTERM/SIGINT.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "app/cli_options.h"
#include "app/cluster_wiring.h"
#include "app/version.h"
#include "log/logger.h"
#include "metrics/metrics.h"
#include "policy/default_policy.h"
#include "policy/policy_hash.h"
#include "policy/policy_store.h"
#include "server/http_server.h"
#include "server/router.h"
#include "service/cluster_backend.h"
#include "service/extender_service.h"

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

int serve(const app::ServeOptions& options) {
  const sigset_t signals = blockShutdownSignals();
  const std::size_t threads = options.threads
                                  ? options.threads
                                  : std::max<std::size_t>(2, std::thread::hardware_concurrency());
  server::initializeThreadPool(threads);
  log::Level level = log::Level::kInfo;
  log::parseLevel(options.logLevel, level);
  log::setLevel(level);

  metrics::Metrics metrics;
  metrics.setBuildInfo(app::kVersionNumber, app::kGitRevision);
  // The cluster wiring subscribes to policy changes (snapshots are rebuilt under a new policy).
  app::PolicyListeners listeners;
  auto initial = std::make_shared<const Policy>(defaultPolicy());
  std::unique_ptr<PolicyStore> store;
  if (!options.policyFile.empty()) {
    store = std::make_unique<PolicyStore>(options.policyFile, initial,
                                          [&metrics, &listeners](const PolicyReloadEvent& e) {
                                            onPolicyEvent(metrics, e);
                                            if (e.kind == PolicyReloadEvent::Kind::kLoaded) {
                                              listeners.notify(e.policy);
                                            }
                                          });
    if (auto s = store->reload(); !s) {
      std::fprintf(stderr, "gpu-topology-extender: cannot start: %s\n", s.error().message.c_str());
      return 2;
    }
    metrics.setPolicyHash(policyHash(*store->current()));
    store->start(kPolicyPollInterval);
  } else {
    metrics.setPolicyHash(policyHash(*initial));
    log::info("using the built-in default policy", {{"hash", policyHash(*initial)}});
  }
  auto currentPolicy = [&store, initial]() { return store ? store->current() : initial; };

  auto cluster = app::makeClusterBackend(options, currentPolicy(), listeners);
  if (!cluster) {
    std::fprintf(stderr, "gpu-topology-extender: cannot start: %s\n",
                 cluster.error().message.c_str());
    return 2;
  }
  std::unique_ptr<app::ClusterObserver> observer;
  // Full-Node mode has no cache to wait for: kube-scheduler sends every Node.
  if (!cluster->backend) metrics.setCacheSynced(true);
  if (cluster->backend) {
    observer = std::make_unique<app::ClusterObserver>(*cluster->backend, cluster->counts, metrics,
                                                      kObserveInterval);
  }
  ExtenderService service(currentPolicy, cluster->backend.get(), &metrics);
  server::Router router(options.pathPrefix, service, &metrics, app::versionJson());
  server::ServerOptions serverOptions;
  serverOptions.host = options.host;
  serverOptions.port = options.port;
  serverOptions.tlsCertFile = options.tlsCertFile;
  serverOptions.tlsKeyFile = options.tlsKeyFile;
  serverOptions.maxBodyBytes = options.maxBodyBytes;
  server::HttpServer server(serverOptions, router);
  if (auto s = server.start(); !s) {
    std::fprintf(stderr, "gpu-topology-extender: %s\n", s.error().message.c_str());
    return 1;
  }
  log::info("gpu-topology-extender serving", {{"version", app::kVersion},
                                              {"prefix", options.pathPrefix},
                                              {"threads", std::to_string(threads)}});
  int sig = 0;
  sigwait(&signals, &sig);
  log::info("shutting down", {{"signal", sig == SIGTERM ? "SIGTERM" : "SIGINT"}});
  server.stop(std::chrono::seconds(10));
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
