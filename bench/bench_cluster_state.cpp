// Memory and update cost of the cluster cache at scale: 5,000 GPU nodes and 100,000 pods fed
// through the same path as the API-server list (JSON -> the sinks' readers -> NodeCacheSink /
// PodCacheSink -> ClusterState), one object at a time as a paged list delivers them. Prints heap
// bytes in use (mallinfo2) and RSS before and after each step, per object, and the time of single
// watch events.
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

#include "api_objects.h"
#include "cluster/apiserver/cache_sinks.h"
#include "cluster/cluster_state.h"
#include "json/json_reader.h"
#include "policy/default_policy.h"

namespace {

using Clock = std::chrono::steady_clock;
using gte::bench::nodeJson;
using gte::bench::podJson;

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

using gte::kube::ReflectorSink;
using gte::kube::WatchEventType;

// One object as a list page or a watch event delivers it: read by the sink's reader where it
// stands, then listed or applied.
bool listed(ReflectorSink& sink, const std::string& json) {
  gte::json::JsonReader reader(json);
  return sink.read(reader).ok() && sink.listItem().ok();
}

bool applied(ReflectorSink& sink, WatchEventType type, const std::string& json) {
  gte::json::JsonReader reader(json);
  return sink.read(reader).ok() && sink.apply(type).ok();
}

}  // namespace

int main(int argc, char** argv) {
  const int nodeCount = argc > 1 ? std::stoi(argv[1]) : 5000;
  const int podCount = argc > 2 ? std::stoi(argv[2]) : 100000;
  auto state = std::make_shared<gte::cluster::ClusterState>(
      std::make_shared<const gte::Policy>(gte::defaultPolicy()));
  auto nodeSink = gte::kube::reflectorSink<gte::NodeInfo>(
      gte::readNodeJson, std::make_shared<gte::cluster::NodeCacheSink>(state, [] {}));
  auto podSink = gte::kube::reflectorSink<gte::PodInfo>(
      gte::readPodJson, std::make_shared<gte::cluster::PodCacheSink>(state, [] {}));
  ReflectorSink& nodes = *nodeSink;
  ReflectorSink& pods = *podSink;

  const Memory start = measure();
  auto t0 = Clock::now();
  nodes.beginList();
  for (int i = 0; i < nodeCount; ++i) {
    if (!listed(nodes, nodeJson(i, i % 4 == 0 ? "11110000" : "00000000"))) return 1;
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
    if (!listed(pods, podJson(i, node, nominated, gpus, when))) return 1;
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
    if (!applied(pods, WatchEventType::kAdded, json)) return 1;
    podEvents.push_back(ms(Clock::now() - t0));
    const std::string node = nodeJson(i, i % 2 ? "11000000" : "00110000");
    t0 = Clock::now();
    if (!applied(nodes, WatchEventType::kModified, node)) return 1;
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
    const bool good = applied(i % 2 ? pods : nodes, WatchEventType::kModified, pod);
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
