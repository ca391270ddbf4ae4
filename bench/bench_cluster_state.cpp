// Memory and update cost of the cluster cache at scale: 5,000 GPU nodes and 100,000 pods fed
// through the same path as the API-server list (JSON -> NodeCacheSink/PodCacheSink ->
// ClusterState), one object at a time as a paged list delivers them. Prints heap bytes in use
// (mallinfo2) and RSS before and after each step, per object, and the time of single watch events.
//
//   bench_cluster_state [nodes=5000] [pods=100000]
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cluster/apiserver/cache_sinks.h"
#include "cluster/cluster_state.h"
#include "policy/default_policy.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::int64_t kAgentGen = 1764670000;  // 2025-12-02T10:06:40Z, the agent's last write

struct Memory {
  std::size_t heap = 0;  // bytes malloc has handed out and not got back
  std::size_t rss = 0;
};

Memory measure() {
  malloc_trim(0);
  Memory m;
  m.heap = mallinfo2().uordblks + mallinfo2().hblkhd;
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  std::size_t resident = 0;
  statm >> pages >> resident;
  m.rss = resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return m;
}

double ms(Clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

std::string pairs(char c) {
  return std::string(28, c);
}

// A Node as the API server lists it: well-known, GPU Feature Discovery and labels-v1 labels, the
// usual status (conditions, addresses, images: skipped by the reader, never stored).
std::string nodeJson(int i, const std::string& used) {
  const std::string name = "gpu-node-" + std::to_string(i);
  std::string labels =
      R"("kubernetes.io/hostname":")" + name +
      R"(","kubernetes.io/arch":"amd64",)"
      R"("kubernetes.io/os":"linux","node.kubernetes.io/instance-type":"p5.48xlarge",)"
      R"("topology.kubernetes.io/region":"us-east-1","topology.kubernetes.io/zone":"us-east-1a",)"
      R"("nvidia.com/gpu.present":"true","nvidia.com/gpu.count":"8",)"
      R"("nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3","nvidia.com/gpu.memory":"81559",)"
      R"("nvidia.com/cuda.driver.major":"550","nvidia.com/mig.capable":"true",)"
      R"("nvidia.com/gpu.family":"hopper","feature.node.kubernetes.io/pci-10de.present":"true",)";
  labels +=
      R"("gputopo.dev/v":"1","gputopo.dev/n":"8","gputopo.dev/model":"NVIDIA-H100-80GB-HBM3",)"
      R"("gputopo.dev/fabric":"nvsw4","gputopo.dev/nvl":")" +
      pairs('i') + R"(","gputopo.dev/pci":")" + pairs('S') +
      R"(","gputopo.dev/numa":"00001111","gputopo.dev/health":"11111111","gputopo.dev/used":")" +
      used + R"(","gputopo.dev/mig":"00000000","gputopo.dev/gen":")" + std::to_string(kAgentGen) +
      "\"";
  return R"({"metadata":{"name":")" + name + R"(","uid":"8a3c2f6e-0000-4000-8000-)" +
         std::to_string(100000000000 + i) + R"(","resourceVersion":")" + std::to_string(1000 + i) +
         R"(","creationTimestamp":"2025-11-01T00:00:00Z","labels":{)" + labels +
         R"(},"annotations":{"node.alpha.kubernetes.io/ttl":"0","volumes.kubernetes.io/controller-managed-attach-detach":"true"}},)"
         R"("spec":{"podCIDR":"10.244.3.0/24","providerID":"aws:///us-east-1a/i-0123456789abcdef0"},)"
         R"("status":{"capacity":{"cpu":"192","memory":"2113425220Ki","nvidia.com/gpu":"8","pods":"110","ephemeral-storage":"1844532280Ki","hugepages-2Mi":"0"},)"
         R"("allocatable":{"cpu":"191450m","memory":"2113220420Ki","nvidia.com/gpu":"8","pods":"110","ephemeral-storage":"1699927071495","hugepages-2Mi":"0"},)"
         R"("conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2025-11-01T00:00:00Z","reason":"KubeletReady","message":"kubelet is posting ready status"}],)"
         R"("addresses":[{"type":"InternalIP","address":"10.0.3.11"},{"type":"Hostname","address":")" +
         name +
         R"("}],"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},)"
         R"("nodeInfo":{"machineID":"ec2abc","systemUUID":"ec2abc","bootID":"b","kernelVersion":"6.1.0","osImage":"Debian GNU/Linux 12","containerRuntimeVersion":"containerd://1.7.0","kubeletVersion":"v1.31.0","kubeProxyVersion":"","operatingSystem":"linux","architecture":"amd64"}}})";
}

// A Pod as listed: two containers (one with GPUs on GPU pods), PodScheduled time, and for a third
// of them kubectl's last-applied-configuration (the cache drops foreign annotations).
std::string podJson(int i, const std::string& node, bool nominatedOnly, int gpus,
                    const std::string& scheduledAt) {
  const std::string name = "job-" + std::to_string(i / 8) + "-worker-" + std::to_string(i % 8);
  std::string annotations = R"("prometheus.io/scrape":"true")";
  if (i % 3 == 0) {
    annotations +=
        R"(,"kubectl.kubernetes.io/last-applied-configuration":")" + std::string(1500, 'x') + "\"";
  }
  const std::string gpuLimits =
      gpus > 0 ? R"(,"limits":{"nvidia.com/gpu":")" + std::to_string(gpus) + R"("})" : "";
  return R"({"metadata":{"name":")" + name + R"(","namespace":"team-)" + std::to_string(i % 40) +
         R"(","uid":"5c1f0000-0000-4000-8000-)" + std::to_string(100000000000 + i) +
         R"(","resourceVersion":")" + std::to_string(200000 + i) +
         R"(","creationTimestamp":"2025-11-30T00:00:00Z","labels":{"app":"trainer","job":"j)" +
         std::to_string(i / 8) + R"("},"annotations":{)" + annotations +
         R"(},"ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"j","uid":"x","controller":true}]},)"
         R"("spec":{)" +
         (nominatedOnly ? std::string() : R"("nodeName":")" + node + R"(",)") +
         R"("containers":[{"name":"main","image":"registry.example.com/trainer:1.2.3","resources":{"requests":{"cpu":"4","memory":"32Gi"})" +
         gpuLimits +
         R"(}},{"name":"sidecar","image":"registry.example.com/log:1","resources":{"requests":{"cpu":"100m","memory":"128Mi"}}}],)"
         R"("schedulerName":"gpu-scheduler","priority":1000,"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]},)"
         R"("status":{"phase":")" +
         (nominatedOnly ? std::string("Pending") : std::string("Running")) + R"(",)" +
         (nominatedOnly ? R"("nominatedNodeName":")" + node + R"(",)" : std::string()) +
         R"("qosClass":"Burstable","conditions":[{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":")" +
         scheduledAt + R"("}]}})";
}

}  // namespace

int main(int argc, char** argv) {
  const int nodeCount = argc > 1 ? std::stoi(argv[1]) : 5000;
  const int podCount = argc > 2 ? std::stoi(argv[2]) : 100000;
  auto state = std::make_shared<gte::cluster::ClusterState>(
      std::make_shared<const gte::Policy>(gte::defaultPolicy()));
  gte::cluster::NodeCacheSink nodes(state, [] {});
  gte::cluster::PodCacheSink pods(state, [] {});

  const Memory start = measure();
  auto t0 = Clock::now();
  nodes.beginList();
  for (int i = 0; i < nodeCount; ++i) {
    if (!nodes.listItem(nodeJson(i, i % 4 == 0 ? "11110000" : "00000000")).ok()) return 1;
  }
  nodes.endList();
  const auto nodeListTime = Clock::now() - t0;
  const Memory afterNodes = measure();

  t0 = Clock::now();
  pods.beginList();
  for (int i = 0; i < podCount; ++i) {
    const std::string node = "gpu-node-" + std::to_string(i % nodeCount);
    const bool nominated = i % 20 == 19;                  // 5% waiting on a nominated node
    const int gpus = i % 10 == 0 ? 1 + (i / 10) % 2 : 0;  // 10% GPU pods of 1-2 GPUs
    // One GPU pod in ten was bound after the agent's last write: counted by prediction.
    const bool recent = gpus > 0 && (i / 10) % 10 == 0;
    const std::string when = recent ? "2025-12-02T10:10:00Z" : "2025-12-01T00:00:00Z";
    if (!pods.listItem(podJson(i, node, nominated, gpus, when)).ok()) return 1;
  }
  pods.endList();
  const auto podListTime = Clock::now() - t0;
  const Memory afterPods = measure();

  // Single watch events after the lists: a pod bound, a node's labels rewritten.
  std::vector<double> podEvents;
  std::vector<double> nodeEvents;
  for (int i = 0; i < 200; ++i) {
    const std::string json =
        podJson(podCount + i, "gpu-node-" + std::to_string(i), false, 2, "2026-01-01T00:00:00Z");
    t0 = Clock::now();
    if (!pods.apply(gte::kube::WatchEventType::kAdded, json).ok()) return 1;
    podEvents.push_back(ms(Clock::now() - t0));
    const std::string node = nodeJson(i, i % 2 ? "11000000" : "00110000");
    t0 = Clock::now();
    if (!nodes.apply(gte::kube::WatchEventType::kModified, node).ok()) return 1;
    nodeEvents.push_back(ms(Clock::now() - t0));
  }
  std::sort(podEvents.begin(), podEvents.end());
  std::sort(nodeEvents.begin(), nodeEvents.end());

  // A new snapshot that re-derives no node (the synced flag flips): the cost of the map copy alone.
  std::vector<double> republish;
  for (int i = 0; i < 100; ++i) {
    t0 = Clock::now();
    state->setSynced(i % 2 == 0);
    republish.push_back(ms(Clock::now() - t0));
  }
  std::sort(republish.begin(), republish.end());
  // The common events change nothing the accounting sees: pod status updates, node heartbeats.
  std::vector<double> quietEvents;
  for (int i = 0; i < 2000; ++i) {
    const std::string node = "gpu-node-" + std::to_string(1000 + i % 1000);
    const std::string pod =
        i % 2 ? podJson(1000 + i, node, false, 0, "2025-12-01T00:00:00Z")
              : nodeJson(1000 + i % 1000, (1000 + i % 1000) % 4 == 0 ? "11110000" : "00000000");
    t0 = Clock::now();
    const bool good = i % 2 ? pods.apply(gte::kube::WatchEventType::kModified, pod).ok()
                            : nodes.apply(gte::kube::WatchEventType::kModified, pod).ok();
    quietEvents.push_back(ms(Clock::now() - t0));
    if (!good) return 1;
  }
  std::sort(quietEvents.begin(), quietEvents.end());

  std::vector<double> reads;
  for (int i = 0; i < 100000; ++i) {
    t0 = Clock::now();
    auto snapshot = state->snapshot();
    reads.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count());
  }
  std::sort(reads.begin(), reads.end());

  const double mib = 1024.0 * 1024.0;
  std::printf("nodes: %d, cached pods: %zu (of %d listed), snapshot nodes: %zu\n", nodeCount,
              state->podCount(), podCount, state->snapshot()->nodes.size());
  std::printf("node list: %.0f ms; heap +%.1f MiB (%.0f bytes/node), RSS +%.1f MiB\n",
              ms(nodeListTime), static_cast<double>(afterNodes.heap - start.heap) / mib,
              static_cast<double>(afterNodes.heap - start.heap) / nodeCount,
              static_cast<double>(afterNodes.rss - start.rss) / mib);
  std::printf("pod list: %.0f ms; heap +%.1f MiB (%.0f bytes/pod), RSS +%.1f MiB\n",
              ms(podListTime), static_cast<double>(afterPods.heap - afterNodes.heap) / mib,
              static_cast<double>(afterPods.heap - afterNodes.heap) / podCount,
              static_cast<double>(afterPods.rss - afterNodes.rss) / mib);
  std::printf(
      "watch event -> new snapshot: pod added p50 %.2f ms p99 %.2f ms; "
      "node labels changed p50 %.2f ms p99 %.2f ms\n",
      podEvents[podEvents.size() / 2], podEvents[podEvents.size() * 99 / 100],
      nodeEvents[nodeEvents.size() / 2], nodeEvents[nodeEvents.size() * 99 / 100]);
  std::printf(
      "watch event changing no accounting (status update, heartbeat): p50 %.3f ms "
      "p99 %.3f ms\n",
      quietEvents[quietEvents.size() / 2], quietEvents[quietEvents.size() * 99 / 100]);
  std::printf("new snapshot re-deriving no node (node map copy only): p50 %.2f ms\n",
              republish[republish.size() / 2]);
  std::printf("snapshot() read: p50 %.0f ns p99 %.0f ns\n", reads[reads.size() / 2],
              reads[reads.size() * 99 / 100]);
  return 0;
}
