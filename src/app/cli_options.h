#pragma once
// Command-line parsing for `gpu-topology-extender
// serve|explain|whatif|nodes|claim-template|version`. Pure, so every flag and every error message
// is unit-tested.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace gte::app {

enum class Command { kServe, kExplain, kWhatif, kNodes, kClaimTemplate, kVersion, kHelp };

enum class ClusterSource { kNone, kKubeconfig, kInCluster, kClusterFile };

// --leader-elect (hold a lease of its own) or --follow-lease (lead while the kube-scheduler beside
// it holds its lease); docs/operations.md, "High availability".
enum class LeaderElection { kNone, kHold, kFollow };

struct ServeOptions {
  // Loopback unless told otherwise: the verbs include bind, which acts with the extender's
  // cluster-wide service account. The Helm chart passes --listen 0.0.0.0:PORT.
  std::string host = "127.0.0.1";
  std::uint16_t port = 8888;
  // --metrics-listen: a second, plain-HTTP listener with only the probes, /metrics and /version
  // (for kubelet and Prometheus when the main port requires client certificates). Empty: none.
  std::string metricsHost;
  std::uint16_t metricsPort = 0;
  std::string pathPrefix = "/scheduler";
  std::string policyFile;  // empty: the built-in default policy
  ClusterSource cluster = ClusterSource::kNone;
  std::string kubeconfig;
  std::string clusterFile;
  std::string tlsCertFile;
  std::string tlsKeyFile;
  std::string tlsClientCaFile;  // --tls-client-ca: require client certificates signed by it
  // Sized for 5,000 full Node objects with images (~3.3 KB each without, up to ~10 KB with).
  std::size_t maxBodyBytes = 64 * 1024 * 1024;
  std::string logLevel = "info";
  std::size_t threads = 0;          // I/O threads; 0: one per core, at least 2
  std::size_t decisionThreads = 0;  // 0: same as threads
  std::size_t maxHeaderBytes = 16 * 1024;
  std::size_t maxConnections = 512;
  std::size_t maxNodesPerRequest = 10000;
  std::chrono::milliseconds requestTimeout{30'000};
  std::chrono::milliseconds idleTimeout{120'000};
  std::chrono::milliseconds tlsHandshakeTimeout{10'000};
  // After SIGTERM: keep serving, every answer with Connection: close, idle connections open
  // (--drain-period); then --shutdown-grace for the requests still in flight.
  std::chrono::milliseconds drainPeriod{5'000};
  std::chrono::milliseconds shutdownGrace{20'000};
  // Binds sent to the API server at once; more wait their turn (--bind-concurrency).
  std::size_t bindConcurrency = 64;
  // A bind not sent within this long of its arrival is dropped (--bind-deadline): kube-scheduler
  // has given up on it. Half a second under the chart's httpTimeout of 3s.
  std::chrono::milliseconds bindDeadline{2'500};
  // API-server connections kept open for bursts of binds (--api-warm-connections).
  std::size_t apiWarmConnections = 16;
  // The node label whose value groups nodes in the fragmentation gauges (--health-pool-label);
  // empty: the GPU model.
  std::string healthPoolLabel;
  // --disable-explain: {prefix}/explain and /explain answer 404 (they reveal pods' requests and
  // nodes' GPU usage to whoever can reach the port).
  bool explain = true;
  // --disable-whatif, --disable-nodes: the same for {prefix}/whatif and {prefix}/nodes.
  bool whatif = true;
  // --dra: the cluster cache also watches ResourceSlices, DeviceClasses and ResourceClaims
  // (resource.k8s.io/v1, Kubernetes 1.34+), DeviceTaintRules where served (1.37+), and decides DRA
  // nodes and claim pods (docs/dra.md).
  bool dra = false;
  bool nodes = true;
  // --whatif-max-pods: pods in one what-if (`count`, or a CSV's rows); --whatif-deadline: the
  // time one what-if may take (it holds a decision thread meanwhile).
  std::size_t whatifMaxPods = 1000;
  std::chrono::milliseconds whatifDeadline{3'000};
  // Leader election: the lease (--leader-elect-lease or --follow-lease), whose holding counts as
  // ours (--leader-elect-identity; empty: the host name, a pod's name), and its timing.
  LeaderElection leaderElection = LeaderElection::kNone;
  std::string leaseNamespace;
  std::string leaseName;
  std::string leaderIdentity;
  std::chrono::milliseconds leaseDuration{10'000};
  std::chrono::milliseconds renewDeadline{7'000};
  std::chrono::milliseconds retryPeriod{1'000};
  // --publish-endpoint NAMESPACE/SERVICE: the leader writes itself into the EndpointSlice
  // SERVICE-leader of that selector-less Service, at --advertise-address (empty: $POD_IP).
  std::string endpointNamespace;
  std::string endpointService;
  std::string advertiseAddress;
};

enum class OutputFormat { kTable, kJson };

// `gpu-topology-extender explain --url URL --pod NAMESPACE/NAME [--top N] [-o table|json]`.
struct ExplainOptions {
  std::string url;      // http://HOST:PORT of a running extender (plain HTTP)
  std::string pod;      // NAMESPACE/NAME
  std::size_t top = 0;  // 0: every node
  OutputFormat output = OutputFormat::kTable;
};

// `gpu-topology-extender whatif --url URL (--gpus N | --mig PROFILE | --pod-file FILE | --csv FILE)
// [--count N | --group-size M] [--min-link C] [--numa single] [--strategy S] [--policy FILE] [-o
// table|json]`.
struct WhatifOptions {
  std::string url;
  std::int64_t gpus = 0;      // --gpus: whole GPUs of the pod
  std::string mig;            // --mig: one MIG instance of this profile ("3g.40gb")
  std::string podFile;        // --pod-file: a v1.Pod as JSON (kubectl get pod -o json)
  std::string csvFile;        // --csv: pods in the simulator's trace format
  std::size_t count = 0;      // --count: copies of the pod (0: not given, one)
  std::size_t groupSize = 0;  // --group-size: one group of that many copies (0: not given)
  std::string minLink;        // --min-link, --numa, --strategy: the pod's gputopo.dev/ annotations
  std::string numa;
  std::string strategy;
  std::string policyFile;  // --policy: a proposed policy YAML, compared with the running one
  OutputFormat output = OutputFormat::kTable;
};

// `gpu-topology-extender nodes --url URL [--node NAME] [--limit N] [-o table|json]`.
struct NodesOptions {
  std::string url;
  std::string node;       // one node; empty: every node
  std::size_t limit = 0;  // 0: the extender's limit (--max-nodes-per-request)
  OutputFormat output = OutputFormat::kTable;
};

enum class ManifestFormat { kYaml, kJson };

// `gpu-topology-extender claim-template --gpus N [--name NAME] [--namespace NS]
// [--device-class CLASS] [--nvswitch-partition] [-o yaml|json]`: prints a ResourceClaimTemplate
// whose request tries well-connected GPU sets first (docs/dra.md, "Claim shaping"). The names are
// checked where the template is built (dra/claim_shaping.h).
struct ClaimTemplateOptions {
  int gpus = 0;
  std::string name;
  std::string ns;
  std::string deviceClass = "gpu.nvidia.com";
  bool nvswitchPartition = false;
  bool nvlinkIsland = false;
  std::string companionClass = "topology.gputopo.dev";
  std::string companionDriver = "topology.gputopo.dev";
  ManifestFormat output = ManifestFormat::kYaml;
};

struct Invocation {
  Command command = Command::kHelp;
  ServeOptions serve;
  std::string helpText;  // for kHelp: what to print
  ExplainOptions explain;
  WhatifOptions whatif;
  NodesOptions nodes;
  ClaimTemplateOptions claimTemplate;
};

// argv without the program name. Errors name the flag and the problem.
Result<Invocation> parseCommandLine(const std::vector<std::string>& args);

std::string topLevelHelp();
std::string serveHelp();
std::string explainHelp();
std::string whatifHelp();
std::string nodesHelp();
std::string claimTemplateHelp();

}  // namespace gte::app
