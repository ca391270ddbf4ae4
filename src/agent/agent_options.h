#pragma once
// Command-line parsing for `gpu-topology-agent discover|run|version`. Pure, so every flag and
// every error is unit-tested; the environment (NODE_NAME) is passed in.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agent/link_health_monitor.h"
#include "base/result.h"

namespace gte::agent {

enum class AgentCommand { kDiscover, kRun, kVersion, kHelp };

// Where discovery reads from: NVML (the default) or nvidia-smi text captures.
struct SourceOptions {
  bool nvml = true;
  std::string nvmlLib = "libnvidia-ml.so.1";  // dlopen name or path
  std::string topoFile;                       // set: text mode
  std::string topoMpFile;
  std::string migFile;
  std::string model;                // text mode: product name (sanitised like GFD)
  std::optional<std::string> used;  // per-GPU usage instead of PodResources
  std::string labelPrefix = "gputopo.dev/";
  // NVML health (docs/agent.md, Health): --nvlink-recovery-per-hour, --nvlink-replay-per-hour,
  // --health-window.
  LinkHealthSettings health;
  bool healthReport = false;  // discover --health: also print per-GPU health and link counters
};

enum class ClusterAccess { kNone, kKubeconfig, kInCluster };

struct RunOptions {
  std::string node;
  ClusterAccess access = ClusterAccess::kNone;
  std::string kubeconfig;
  std::chrono::milliseconds interval{30'000};
  std::chrono::milliseconds minInterval{10'000};
  bool dryRun = false;
  bool cleanup = false;
  bool once = false;             // one pass, then exit (tests, debugging)
  std::string listen = ":9464";  // empty: no HTTP endpoint
  std::string podResourcesSocket = "/var/lib/kubelet/pod-resources/kubelet.sock";
  std::string logLevel = "info";
  // --companion-slice: publish the NVLink-island companion ResourceSlice (docs/dra.md) under
  // --companion-driver.
  bool companionSlice = false;
  std::string companionDriver = "topology.gputopo.dev";
  // --device-plugin-config NAMESPACE/NAME: the NVIDIA device plugin's configuration ConfigMap,
  // read each pass for labels-v1 `sharing` (docs/sharing.md); empty: not read.
  // --device-plugin-config-default KEY: the config name for nodes without the
  // nvidia.com/device-plugin.config label (the plugin's default config).
  std::string devicePluginConfigNamespace;
  std::string devicePluginConfigName;
  std::string devicePluginConfigDefault;
};

struct AgentInvocation {
  AgentCommand command = AgentCommand::kHelp;
  SourceOptions source;
  RunOptions run;
  std::optional<std::int64_t> generation;  // discover --gen: fixed `gen` for reproducible output
  // discover -o: "labels" (key=value lines) or "node" (a v1 Node named `nodeName`, for a cluster
  // file or kubectl apply)
  std::string output = "labels";
  std::string nodeName;
  std::string helpText;
};

// argv without the program name; `nodeNameEnv` is NODE_NAME (downward API), used when --node is
// absent. Errors name the flag.
Result<AgentInvocation> parseAgentCommandLine(const std::vector<std::string>& args,
                                              const std::optional<std::string>& nodeNameEnv);

// "30s", "10s", "1m", "500ms", "2h".
Result<std::chrono::milliseconds> parseDuration(const std::string& text);

std::string agentHelp();

}  // namespace gte::agent
